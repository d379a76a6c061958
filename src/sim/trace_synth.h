// SPDX-License-Identifier: Apache-2.0
// SynthesizeTrace: a Megatron 1F1B job as an ops table, by replay.
//
// A simulated job is "durations drawn from models, then replayed" (DESIGN.md
// §3): the program order of every stage gives the reference instance, the
// Megatron dependency model is built from it, and the replay engine turns
// the chosen op costs into timestamps. Comm ops end at the rendezvous time
// plus their transfer time, so their traced duration includes the blocking.

#ifndef STRAG_SRC_SIM_TRACE_SYNTH_H_
#define STRAG_SRC_SIM_TRACE_SYNTH_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "trace/op_type.h"
#include "trace/ops_table.h"

namespace strag::sim {

struct SynthJob {
  int32_t dp = 1;
  int32_t pp = 1;
  int32_t vpp = 1;  // > 1: interleaved 1F1B
  int32_t microbatches = 1;
  std::vector<int64_t> steps = {0};
  int64_t step_period_ns = 0;  // step k starts at k * period (0: each at 0)
};

// The op whose cost is asked for.
struct SynthOp {
  int64_t step;
  int32_t dp;
  int32_t stage;
  trace::OpType type;
  int32_t seq_id;
  int32_t microbatch;  // -1 if not per microbatch
  int32_t chunk;       // model chunk on the stage, -1 if none
};

// Cost in seconds: duration of a plain op, transfer time of a comm op.
using CostFn = std::function<double(const SynthOp&)>;

// Host time before an op launches, in seconds (data loading, GC, Python).
using LaunchDelayFn = std::function<double(const SynthOp&)>;

// Global rank of a worker: stage * dp + dp_rank (TP = CP = 1). Without
// `launch_delay` every op launches as soon as its dependencies end.
Result<trace::OpsTable> SynthesizeTrace(const SynthJob& job, const CostFn& cost,
                                        const LaunchDelayFn& launch_delay = {});

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_TRACE_SYNTH_H_
