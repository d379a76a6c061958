// SPDX-License-Identifier: Apache-2.0
// Timeline: the replayed ops of one step, for the timeline views (HTML
// report, Perfetto export): every op of every traced worker with its start
// and end in the replay without launch delays ("actual") and in the ideal
// replay, plus the critical path of the actual replay.

#ifndef STRAG_SRC_WHATIF_TIMELINE_H_
#define STRAG_SRC_WHATIF_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "whatif/prepared_trace.h"

namespace strag::whatif {

struct TimelineOp {
  int32_t rank = 0, dp = 0, pp = 0;  // the worker
  trace::OpType type;
  int32_t seq_id = 0;
  int32_t microbatch = -1;
  bool comm = false;           // a member of a comm group
  double start_s = 0, end_s = 0;              // actual (T), step-relative
  double ideal_start_s = 0, ideal_end_s = 0;  // ideal (T_ideal)
  // Index (into Timeline::ops) of the op this one waited for in the actual
  // replay: the dependency whose end set its start, or for a comm op the
  // latest-starting member of its rendezvous; -1 for a root.
  int64_t waited_for = -1;
  bool on_critical_path = false;  // of the actual replay
};

struct Timeline {
  Layout layout = Layout::kMegatron;  // kRanks: `pp` is the rank's index
  int64_t step = 0;
  double step_time_s = 0;        // actual T of the step (max optimizer end)
  double ideal_step_time_s = 0;  // T_ideal
  std::vector<TimelineOp> ops;   // ordered by worker (rank), then start
};

// Replays step `step_index` (an index into trace.steps) with the traced
// durations and no launch delays, and with the ideal durations of
// `ideal_cost` (per node, as Analyze computes them; empty: the actual values
// for both). Cost O(ops of the step).
Result<Timeline> BuildTimeline(const PreparedTrace& trace, size_t step_index,
                               const std::vector<double>& ideal_cost);

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_TIMELINE_H_
