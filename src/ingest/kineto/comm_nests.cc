// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/comm_nests.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace strag::ingest::kineto {

CommNests::CommNests(std::vector<CpuCommOp> ops) : ops_(std::move(ops)) {
  std::stable_sort(ops_.begin(), ops_.end(),
                   [](const CpuCommOp& a, const CpuCommOp& b) {
                     if (a.thread != b.thread) return a.thread < b.thread;
                     if (a.ts != b.ts) return a.ts < b.ts;
                     return a.end > b.end;
                   });
  const size_t n = ops_.size();
  parent_.assign(n, -1);
  root_.resize(n);
  depth_.assign(n, 0);
  nest_end_.assign(n, 0);
  std::vector<size_t> stack;
  for (size_t i = 0; i < n; ++i) {
    const CpuCommOp& op = ops_[i];
    if (i > 0 && ops_[i - 1].thread != op.thread) stack.clear();
    while (!stack.empty()) {
      const CpuCommOp& top = ops_[stack.back()];
      if (op.ts < top.end || op.ts == top.ts) break;  // inside top
      stack.pop_back();
    }
    if (stack.empty()) {
      root_[i] = i;
    } else {
      parent_[i] = static_cast<int64_t>(stack.back());
      root_[i] = root_[stack.back()];
      depth_[i] = depth_[stack.back()] + 1;
    }
    nest_end_[root_[i]] = i + 1;
    // A gloo op is the work of a call, never a caller: an isend's span runs
    // from the post to wait(), and the calls made meanwhile are not in it.
    if (op.family != CpuCommFamily::kGloo) stack.push_back(i);
  }
}

int64_t CommNests::Innermost(const ThreadKey& thread, int64_t t) const {
  // The last op of `thread` that starts at or before t: it contains t, or
  // the op that does is one of its ancestors (the ops nest).
  const auto after = std::upper_bound(
      ops_.begin(), ops_.end(), std::pair(thread, t),
      [](const std::pair<ThreadKey, int64_t>& key, const CpuCommOp& op) {
        if (key.first != op.thread) return key.first < op.thread;
        return key.second < op.ts;
      });
  if (after == ops_.begin()) return -1;
  int64_t i = static_cast<int64_t>(after - ops_.begin()) - 1;
  if (ops_[static_cast<size_t>(i)].thread != thread) return -1;
  while (i >= 0 && ops_[static_cast<size_t>(i)].end < t) {
    i = parent_[static_cast<size_t>(i)];
  }
  return i;
}

CommDetails CommNests::Merged(size_t i) const {
  CommDetails details = ops_[i].details;
  for (int64_t p = parent_[i]; p >= 0; p = parent_[static_cast<size_t>(p)]) {
    details.Fill(ops_[static_cast<size_t>(p)].details);
  }
  return details;
}

CommDetails CommNests::NestDetails(size_t root) const {
  std::vector<size_t> members(nest_end_[root] - root);
  std::iota(members.begin(), members.end(), root);
  std::stable_sort(members.begin(), members.end(),
                   [&](size_t a, size_t b) { return depth_[a] > depth_[b]; });
  CommDetails details;
  for (size_t m : members) details.Fill(ops_[m].details);
  return details;
}

}  // namespace strag::ingest::kineto
