// SPDX-License-Identifier: Apache-2.0
// YAML for simulator job specs (docs/formats/sim-spec.md), parsed with
// yaml-cpp into a small tree that remembers where each node was written.
//
// Accepted: YAML 1.2 as yaml-cpp 0.7 reads it: block and flow styles,
// plain, quoted and block (| >) scalars, multi-line scalars, comments,
// anchors and aliases (expanded into copies), core tags (!!str makes a
// scalar a string), `%YAML` / `%TAG` directives, `---` / `...`, a UTF-8
// byte order mark, LF or CRLF line ends.
//
// Rejected with "SOURCE: line L, column C: what" (1-based; the column
// counts bytes): YAML syntax errors, several documents, control characters
// (all but tab, LF and CR) and UTF-16 / UTF-32 text, duplicate keys, empty
// keys, keys that are collections, other tags than the core ones, nesting
// deeper than 64 collections, and a document that holds more than 2^20
// nodes or 64 MiB of text with its aliases expanded ("billion laughs").
// yaml-cpp's exceptions never leave ParseYaml.

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
// "`source`: line L, column C: what". O(size of the text and of the
// expanded tree); never throws.
Result<YamlNode> ParseYaml(std::string_view text, std::string_view source);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_SPEC_YAML_H_
