// SPDX-License-Identifier: Apache-2.0
// WarningLog: warnings grouped by kind, at most N messages per kind, so a bad
// collective repeated over 10,000 steps gives ten lines and a count, not
// 10,000 lines.

#ifndef STRAG_SRC_GRAPH_GENERIC_WARNING_LOG_H_
#define STRAG_SRC_GRAPH_GENERIC_WARNING_LOG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strag::graph {

class WarningLog {
 public:
  explicit WarningLog(size_t max_per_kind) : max_per_kind_(max_per_kind) {}

  void Add(std::string_view kind, std::string message) {
    auto [it, inserted] = count_.emplace(std::string(kind), 0);
    if (inserted) kinds_.push_back(it->first);
    if (++it->second <= static_cast<int64_t>(max_per_kind_)) {
      messages_.push_back(std::move(message));
    }
  }

  // The messages in order of arrival, then one line per kind that overflowed.
  std::vector<std::string> Take() {
    for (const std::string& kind : kinds_) {
      const int64_t extra = count_[kind] - static_cast<int64_t>(max_per_kind_);
      if (extra > 0) {
        messages_.push_back("... and " + std::to_string(extra) + " more " +
                            kind + " warnings");
      }
    }
    return std::move(messages_);
  }

 private:
  size_t max_per_kind_;
  std::map<std::string, int64_t> count_;
  std::vector<std::string> kinds_;  // in order of first use
  std::vector<std::string> messages_;
};

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_WARNING_LOG_H_
