// SPDX-License-Identifier: Apache-2.0
// What a YAML text must pass before yaml-cpp reads it, shared by strag's
// two YAML readers (sim/spec_yaml: job specs; ingest/ops_csv/meta_yaml: a
// trace's metadata), and the stream they hand it. Pure text scans, O(n).

#ifndef STRAG_SRC_BASE_YAML_PRESCAN_H_
#define STRAG_SRC_BASE_YAML_PRESCAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>

namespace strag {

// Where a text fails a scan (1-based line and column) and why.
struct TextProblem {
  int64_t line = 0, column = 0;
  std::string what;
};

// YAML allows no control character but tab, LF and CR; yaml-cpp 0.7 would
// read byte 0x04 as the end of the input and drop the others from plain
// scalars, so they are refused before it sees them. So is UTF-16 / UTF-32
// (a byte order mark), which it would decode into other positions than the
// file's.
std::optional<TextProblem> FindBadYamlByte(std::string_view text);

// yaml-cpp's scanner reads the tokens of a flow collection ahead until it
// knows whether the collection is a key: 1 MB of '[' queues a million
// tokens (250 MB, 0.6 s; 4 s under ASan) before its depth guard could stop
// it. So the nesting of flow collections is measured first: '[' and '{'
// where a node may start, quoted scalars and comments skipped. The first
// bracket past `max_depth` levels, or nullopt.
std::optional<TextProblem> FindDeepFlow(std::string_view text,
                                        size_t max_depth);

// A read-only stream buffer over a text: yaml-cpp reads a std::istream,
// and this spares a copy into a std::istringstream.
class ViewStreamBuf : public std::streambuf {
 public:
  explicit ViewStreamBuf(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // only read
    setg(begin, begin, begin + text.size());
  }
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_YAML_PRESCAN_H_
