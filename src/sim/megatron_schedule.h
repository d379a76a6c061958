// SPDX-License-Identifier: Apache-2.0
// The per-stage program order of a Megatron-LM training step under 1F1B
// and interleaved 1F1B (whatif-method.md §4.2-§4.3): DP params all-gather,
// warm-up forwards, steady 1F1B pairs, cool-down backwards, then the
// post-compute chain.

#ifndef STRAG_SRC_SIM_MEGATRON_SCHEDULE_H_
#define STRAG_SRC_SIM_MEGATRON_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "trace/op_type.h"

namespace strag::sim {

struct ScheduledOp {
  trace::OpType type;
  int32_t seq_id;      // order among same-type ops of the stage
  int32_t microbatch;  // -1 for ops that are not per microbatch
  int32_t chunk = 0;   // model chunk on the stage (`mc`); -1 if none
};

// Program order of `stage` (0-based) of `pp` stages with `microbatches`
// microbatches. `with_dp` adds the params all-gather and the grads
// reduce-scatter (data parallelism > 1).
std::vector<ScheduledOp> OneFOneBProgram(int32_t stage, int32_t pp,
                                         int32_t microbatches, bool with_dp);

// One entry of Megatron's interleaved schedule table: virtual microbatch k
// is the forward of (microbatch, chunk); its backward runs the same
// microbatch on chunk vpp - 1 - chunk.
struct VirtualMicrobatch {
  int32_t microbatch;
  int32_t chunk;
};

// Megatron's `get_schedule_table`: for each group of `group_size`
// microbatches (the last one may be short), chunks 0..vpp-1 and within each
// chunk the group's microbatches. Size microbatches * vpp.
std::vector<VirtualMicrobatch> InterleavedScheduleTable(int32_t microbatches,
                                                        int32_t vpp,
                                                        int32_t group_size);

struct ComputeStep {
  bool forward;
  int32_t microbatch;
  int32_t chunk;  // model chunk on the stage
};

// The compute order of `stage` under interleaved 1F1B: warm-up
// w = min(2 (pp - stage - 1) + (vpp - 1) group_size, microbatches * vpp)
// forwards, then 1F1B pairs F(w + k), B(k), then the w remaining backwards.
// `group_size` is Megatron's microbatch_group_size_per_vp_stage (default pp).
std::vector<ComputeStep> InterleavedComputeOrder(int32_t stage, int32_t pp,
                                                 int32_t microbatches,
                                                 int32_t vpp,
                                                 int32_t group_size);

// Program order of `stage` under interleaved 1F1B with `vpp` model chunks
// per stage (whatif-method.md §4.3; microbatch group size = pp). Every
// forward is preceded by a forward recv and followed by a forward send, and
// every backward by a backward recv / followed by a backward send, as the
// profiler records them; those whose peer chunk does not exist (the first
// chunk's recv on stage 0, ...) are the type-2 no-ops of the dependency
// model. One params all-gather and one grads reduce-scatter per chunk.
std::vector<ScheduledOp> InterleavedProgram(int32_t stage, int32_t pp,
                                            int32_t microbatches, int32_t vpp,
                                            bool with_dp);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_MEGATRON_SCHEDULE_H_
