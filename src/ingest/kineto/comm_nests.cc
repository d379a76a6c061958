// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/comm_nests.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace strag::ingest::kineto {
namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

// Whether `op` lies inside `open` (see the constructor's contract).
template <typename Op>
bool Inside(const Op& op, const Op& open) {
  return op.ts < open.end || op.ts == open.ts;
}

// A gloo op is the work of a call, never a caller: an isend's span runs
// from the post to wait(), and the calls made meanwhile are not in it.
bool ContainsNothing(const CpuCommOp& op) {
  return op.family == CpuCommFamily::kGloo;
}
bool ContainsNothing(const CpuOpSpan&) { return false; }

// The stack of open ops of one thread, as the constructor builds it, and
// along it the ops that end later than every op above them ("the chain",
// bottom first: their ends strictly decrease). The innermost open op that
// holds a time t is the topmost op of the stack with end >= t; every op
// above it ends before t, so it is on the chain, where a binary search
// finds it. A push truncates the chain to the ops that end after the new
// one and overwrites one slot; popping undoes exactly that (pushes and pops
// are LIFO), so each step costs O(log n).
template <typename Op>
class OpenOps {
 public:
  explicit OpenOps(const std::vector<Op>& ops) : ops_(ops) {}

  void Clear() {
    stack_.clear();
    undo_.clear();
    chain_size_ = 0;
  }
  // Op i starts: the ops that do not contain it close; it opens unless it
  // is a gloo op (which contains nothing).
  void Open(size_t i) {
    const Op& op = ops_[i];
    while (!stack_.empty() && !Inside(op, ops_[stack_.back()])) {
      const Undo& u = undo_.back();
      if (u.prev != kNone) chain_[u.pos] = u.prev;
      chain_size_ = u.size;
      undo_.pop_back();
      stack_.pop_back();
    }
    if (ContainsNothing(op)) return;
    const size_t pos =
        ChainPrefix([&](size_t c) { return ops_[c].end > op.end; });
    undo_.push_back(
        {pos, chain_size_, pos < chain_.size() ? chain_[pos] : kNone});
    if (pos < chain_.size()) {
      chain_[pos] = i;
    } else {
      chain_.push_back(i);
    }
    chain_size_ = pos + 1;
    stack_.push_back(i);
  }
  // The topmost open op with end >= t, or -1.
  int64_t Holding(int64_t t) const {
    const size_t k = ChainPrefix([&](size_t c) { return ops_[c].end >= t; });
    return k == 0 ? -1 : static_cast<int64_t>(chain_[k - 1]);
  }

 private:
  struct Undo {
    size_t pos;   // the chain slot the push overwrote
    size_t size;  // the chain's size before the push
    size_t prev;  // what the slot held (kNone: it was new)
  };
  // The length of the chain's prefix whose ops satisfy `pred` (a predicate
  // that holds on a prefix, as the ends decrease).
  template <typename Pred>
  size_t ChainPrefix(Pred pred) const {
    const auto end = chain_.begin() + static_cast<std::ptrdiff_t>(chain_size_);
    return static_cast<size_t>(std::partition_point(chain_.begin(), end, pred) -
                               chain_.begin());
  }

  const std::vector<Op>& ops_;
  std::vector<size_t> stack_;
  std::vector<Undo> undo_;  // per stack entry
  std::vector<size_t> chain_;
  size_t chain_size_ = 0;
};

// CommNests::InnermostOf over `ops`, sorted as the constructor sorts them
// (Op and Point name their thread alike).
template <typename Op, typename Point>
std::vector<int64_t> InnermostSweep(const std::vector<Op>& ops,
                                    const std::vector<Point>& points) {
  std::vector<int64_t> out(points.size(), -1);
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const auto before = [&](size_t a, size_t b) {
    if (points[a].thread != points[b].thread) {
      return points[a].thread < points[b].thread;
    }
    return points[a].t < points[b].t;
  };
  // Launches in row order often come sorted already (one thread, in time).
  if (!std::is_sorted(order.begin(), order.end(), before)) {
    std::stable_sort(order.begin(), order.end(), before);
  }
  OpenOps<Op> open(ops);
  const size_t n = ops.size();
  size_t next = 0;      // the next op to open
  size_t last = kNone;  // the last op opened on the current thread
  bool started = false;
  decltype(Point::thread) thread{};
  for (size_t q : order) {
    const Point& p = points[q];
    if (!started || p.thread != thread) {
      started = true;
      thread = p.thread;
      open.Clear();
      last = kNone;
      while (next < n && ops[next].thread < thread) ++next;
    }
    // Opens the ops that start at or before t: `last` is then the last op
    // of the thread with ts <= t, the one the ancestors' walk starts from.
    while (next < n && ops[next].thread == thread && ops[next].ts <= p.t) {
      open.Open(next);
      last = next++;
    }
    if (last == kNone) continue;
    const Op& op = ops[last];
    out[q] = ContainsNothing(op) && op.end >= p.t ? static_cast<int64_t>(last)
                                                  : open.Holding(p.t);
  }
  return out;
}

}  // namespace

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
    while (!stack.empty() && !Inside(op, ops_[stack.back()])) {
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
  MergeNests();
}

// Merged: an op's details filled from its parent's merged details (Fill is
// first-wins field by field, so this equals filling from each ancestor in
// turn); parents come first in op order. NestDetails: the members of each
// nest (contiguous in op order) bucketed by depth, deepest first, each
// bucket in op order: a stable sort by depth in linear time.
void CommNests::MergeNests() {
  const size_t n = ops_.size();
  merged_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    merged_[i] = ops_[i].details;
    if (parent_[i] >= 0) {
      merged_[i].Fill(merged_[static_cast<size_t>(parent_[i])]);
    }
  }
  nest_details_.assign(n, CommDetails());
  std::vector<size_t> first;  // per depth: start of its bucket
  std::vector<size_t> order;
  for (size_t root = 0; root < n; root = nest_end_[root]) {
    const size_t end = nest_end_[root];
    uint32_t deepest = 0;
    for (size_t m = root; m < end; ++m) deepest = std::max(deepest, depth_[m]);
    first.assign(size_t{deepest} + 2, 0);
    for (size_t m = root; m < end; ++m) ++first[deepest - depth_[m] + 1];
    std::partial_sum(first.begin(), first.end(), first.begin());
    order.resize(end - root);
    for (size_t m = root; m < end; ++m) order[first[deepest - depth_[m]]++] = m;
    CommDetails& details = nest_details_[root];
    for (size_t m : order) details.Fill(ops_[m].details);
  }
}

std::vector<int64_t> CommNests::InnermostOf(
    const std::vector<ThreadPoint>& points) const {
  return InnermostSweep(ops_, points);
}

std::vector<int64_t> InnermostCpuOps(std::vector<CpuOpSpan>* ops,
                                     const std::vector<CpuOpPoint>& points) {
  const auto before = [](const CpuOpSpan& a, const CpuOpSpan& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.ts != b.ts) return a.ts < b.ts;
    return a.end > b.end;
  };
  // The ops of one thread come in time order in practice.
  if (!std::is_sorted(ops->begin(), ops->end(), before)) {
    std::stable_sort(ops->begin(), ops->end(), before);
  }
  return InnermostSweep(*ops, points);
}

}  // namespace strag::ingest::kineto
