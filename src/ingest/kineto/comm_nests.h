// SPDX-License-Identifier: Apache-2.0
// CommNests: the CPU comm ops of a trace arranged by thread and nesting
// (c10d::allreduce_ > record_param_comms > nccl:all_reduce > the launch),
// to find the ops around a point in time and merge what they say.

#ifndef STRAG_SRC_INGEST_KINETO_COMM_NESTS_H_
#define STRAG_SRC_INGEST_KINETO_COMM_NESTS_H_

#include <cstdint>
#include <vector>

#include "ingest/kineto/trace_records.h"

namespace strag::ingest::kineto {

// A point in time on a thread (a launch), for CommNests::InnermostOf.
struct ThreadPoint {
  ThreadKey thread;
  int64_t t = 0;
};

class CommNests {
 public:
  // Sorts `ops` by thread, start, then longest first, and finds each op's
  // parent: the innermost op of its thread that contains its start. An op
  // that starts where another ends is not inside it; one that starts with
  // it and is no longer is. A gloo op contains nothing (an async op's span
  // lasts until its wait()). Also merges, once, what each op and the ops
  // around it say (Merged) and what each nest says (NestDetails), so that
  // asking costs nothing however deep the nests are (adversarial traces
  // nest 100k ops). O(n log n) time, O(n) memory.
  explicit CommNests(std::vector<CpuCommOp> ops);

  const std::vector<CpuCommOp>& ops() const { return ops_; }
  int64_t parent(size_t i) const { return parent_[i]; }
  // The outermost op of i's nest (i itself when it has no parent).
  size_t root(size_t i) const { return root_[i]; }

  // For each point, the innermost op of its thread with ts <= t <= end
  // (the last op that starts at or before t, or the nearest of its
  // ancestors that still holds t); -1 when none. One sweep over the ops
  // and the sorted points: O((n + q) log(n + q)), whatever the depth.
  std::vector<int64_t> InnermostOf(
      const std::vector<ThreadPoint>& points) const;

  // What op i and the ops around it say, innermost first.
  const CommDetails& Merged(size_t i) const { return merged_[i]; }
  // What the whole nest of `root` says, deepest ops first (ties in op
  // order).
  const CommDetails& NestDetails(size_t root) const {
    return nest_details_[root];
  }

 private:
  void MergeNests();

  std::vector<CpuCommOp> ops_;
  std::vector<int64_t> parent_;
  std::vector<size_t> root_;
  std::vector<uint32_t> depth_;
  std::vector<size_t> nest_end_;  // per root: one past its last member
  std::vector<CommDetails> merged_;
  std::vector<CommDetails> nest_details_;  // per root (others: empty)
};

// The innermost CPU op around each point (a launch), as
// CommNests::InnermostOf finds it, for the plain CPU ops of a GPU trace
// (aten::mm around its cudaLaunchKernel): an index into `ops`, which are
// sorted first (by thread, start, then longest first); -1 when none.
// O((n + q) log(n + q)) time, O(n + q) memory, whatever the depth.
std::vector<int64_t> InnermostCpuOps(std::vector<CpuOpSpan>* ops,
                                     const std::vector<CpuOpPoint>& points);

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_COMM_NESTS_H_
