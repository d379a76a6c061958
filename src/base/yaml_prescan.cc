// SPDX-License-Identifier: Apache-2.0
#include "base/yaml_prescan.h"

namespace strag {

std::optional<TextProblem> FindBadYamlByte(std::string_view text) {
  if (text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE")) {
    return TextProblem{1, 1,
                       "UTF-16 or UTF-32 text (byte order mark); save the "
                       "file as UTF-8"};
  }
  int64_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u == '\n') {
      ++line;
      line_start = i + 1;
    } else if ((u < 0x20 && u != '\t' && u != '\r') || u == 0x7f) {
      return TextProblem{line, static_cast<int64_t>(i - line_start) + 1,
                         "control character (byte " + std::to_string(u) + ")"};
    }
  }
  return std::nullopt;
}

std::optional<TextProblem> FindDeepFlow(std::string_view text,
                                        size_t max_depth) {
  size_t depth = 0;
  int64_t line = 1;
  size_t line_start = 0;
  bool node_start = true;  // a node may start at the next non-space byte
  const auto space_at = [&](size_t i) {
    return i >= text.size() || text[i] == ' ' || text[i] == '\t' ||
           text[i] == '\r' || text[i] == '\n';
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      node_start = true;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      continue;
    } else if (c == '#' && (i == 0 || space_at(i - 1))) {
      const size_t eol = text.find('\n', i);
      if (eol == std::string_view::npos) break;
      i = eol - 1;
    } else if (node_start && (c == '\'' || c == '"')) {
      size_t end = i + 1;
      while (end < text.size() && text[end] != c) {
        end += c == '"' && text[end] == '\\' ? 2 : 1;
      }
      if (end >= text.size()) break;  // unclosed: yaml-cpp says so
      for (size_t j = text.find('\n', i); j < end; j = text.find('\n', j + 1)) {
        ++line;
        line_start = j + 1;
      }
      i = end;
      node_start = false;
    } else if (node_start && (c == '!' || c == '&')) {
      // A tag or an anchor before a node: the node still starts after it.
      while (i + 1 < text.size() && !space_at(i + 1) && text[i + 1] != '[' &&
             text[i + 1] != '{') {
        ++i;
      }
    } else if (node_start && (c == '[' || c == '{')) {
      if (++depth > max_depth) {
        return TextProblem{line, static_cast<int64_t>(i - line_start) + 1,
                           "nesting deeper than " + std::to_string(max_depth) +
                               " levels"};
      }
    } else if (c == ']' || c == '}') {
      depth -= depth > 0 ? 1 : 0;
      node_start = false;
    } else {
      node_start = (c == ',' && depth > 0) ||
                   ((c == ':' || c == '-' || c == '?') &&
                    (depth > 0 || space_at(i + 1)));
    }
  }
  return std::nullopt;
}

}  // namespace strag
