// SPDX-License-Identifier: Apache-2.0
// Step split: which ProfilerStep span of its rank each op belongs to.
//
// An op belongs to the step whose span contains its launch time (the CPU-side
// call that enqueued it), or its start when the launch time is unknown: a
// kernel launched at the end of step N that runs into step N + 1 is still
// work of step N. Ops in no span are dropped and counted, as are rows that
// cannot be used (negative duration, a communication index out of range).

#ifndef STRAG_SRC_GRAPH_GENERIC_STEP_SPLIT_H_
#define STRAG_SRC_GRAPH_GENERIC_STEP_SPLIT_H_

#include <cstdint>
#include <vector>

#include "trace/rank_trace.h"

namespace strag::graph {

struct RankSteps {
  std::vector<trace::StepSpan> spans;       // sorted by start, unique ids
  std::vector<std::vector<uint32_t>> rows;  // per span: its op rows
  int64_t outside = 0;                      // ops in no span
  int64_t invalid = 0;                      // rows skipped as unusable
  int64_t duplicate_spans = 0;  // spans whose id was seen before (ignored)
};

// The time an op is assigned to a step by: launch, else start.
inline int64_t StepKey(const trace::RankTrace& t, size_t row) {
  return t.launch_ns[row] >= 0 ? t.launch_ns[row] : t.start_ns[row];
}

// Splits the rows of `trace` (whose columns must have equal lengths) into
// its step spans. O(ops log spans).
RankSteps SplitSteps(const trace::RankTrace& trace);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_STEP_SPLIT_H_
