// SPDX-License-Identifier: Apache-2.0
// A small YAML subset, parsed into a tree, for simulator job specs
// (docs/formats/sim-spec.md).
//
// Why not a YAML library: specs need only a handful of constructs, and every
// error must name the source and the line. Anything outside the subset is
// rejected rather than half-understood.
//
// Supported: block mappings by indentation (spaces only), block lists
// (`- item`, `- {flow map}`, `- key: value` compact maps, a list at the same
// indentation as its parent key), flow mappings `{a: 1, b: [1, 2]}` and flow
// lists `[1, 2]` (nestable, may span lines, trailing comma allowed), plain,
// 'single-quoted' ('' is one quote) and "double-quoted" scalars (escapes
// \" \\ \/ \n \t \r \0), `#` comments at the line start or after whitespace,
// blank lines, a `---` before the content and a `...` after it, a leading
// UTF-8 byte order mark.
//
// Rejected with "SOURCE: line N: ...": tabs outside quotes and comments,
// anchors, aliases, tags, block scalars (| >), directives, complex keys (?),
// duplicate keys, bad indentation, multi-line plain or quoted scalars,
// unclosed brackets or quotes, several documents, control characters.

#ifndef STRAG_SRC_SIM_SPEC_YAML_H_
#define STRAG_SRC_SIM_SPEC_YAML_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace strag::sim {

struct YamlNode {
  enum class Kind { kScalar, kMap, kList };

  Kind kind = Kind::kScalar;
  // 1-based line where the node's content starts; for an empty value
  // (`key:` with nothing under it) the key's line.
  int32_t line = 0;
  // Entries of a map: the key and the 1-based line it is on.
  std::string key;
  int32_t key_line = 0;
  // Scalars: the text, quotes removed and escapes resolved.
  std::string text;
  bool quoted = false;
  // Map entries in file order, or list items.
  std::vector<YamlNode> children;

  // An empty plain scalar: `key:` with nothing after or under it.
  bool IsNull() const {
    return kind == Kind::kScalar && !quoted && text.empty();
  }
  // The entry of a map with `key`, or nullptr (also for non-maps).
  const YamlNode* Find(std::string_view key_name) const;
  // "a map", "a list", "a scalar" or "nothing": for error messages.
  std::string_view KindName() const;
};

// Parses `text` into its root node. An empty document (only blank lines
// and comments) is an empty map. Errors are kInvalidInput,
// "`source`: line N: what".
Result<YamlNode> ParseYaml(std::string_view text, std::string_view source);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_SPEC_YAML_H_
