// SPDX-License-Identifier: Apache-2.0
#include "cli/kineto_input.h"

#include <algorithm>
#include <charconv>

namespace strag::cli {

Result<std::map<std::string, int32_t>> ParseRankMap(const std::string& text) {
  std::map<std::string, int32_t> map;
  for (size_t at = 0; at < text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t eq = item.rfind('=');
    int32_t rank = -1;
    if (eq == std::string::npos || eq == 0 ||
        std::from_chars(item.data() + eq + 1, item.data() + item.size(), rank)
                .ptr != item.data() + item.size() ||
        rank < 0) {
      return InvalidInput(
          "flag --rank-map: expected FILE=RANK[,FILE=RANK...], "
          "got \"" +
          item + "\"");
    }
    map[item.substr(0, eq)] = rank;
    at = comma + 1;
  }
  return map;
}

}  // namespace strag::cli
