// SPDX-License-Identifier: Apache-2.0
// ScheduleModel: the Megatron dependency model of a scheduled job.
//
// The per-stage program order (1F1B or interleaved) gives the reference
// instance with ordinal times (only the order and the no-op rules matter, and
// ordinal times trigger no time-based no-op rule); the published model is
// built from it exactly as from a trace, so a simulated job replays with the
// same rules `strag analyze` applies.

#ifndef STRAG_SRC_SIM_SCHEDULE_MODEL_H_
#define STRAG_SRC_SIM_SCHEDULE_MODEL_H_

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/megatron/megatron_model.h"

namespace strag::sim {

struct ScheduleModel {
  graph::MegatronModel model;
  // Per node: microbatch (-1 if none) and model chunk (`mc`, -1 if none).
  std::vector<int32_t> microbatch;
  std::vector<int32_t> chunk;
};

// `with_dp`: DP collectives exist (data parallelism > 1).
Result<ScheduleModel> BuildScheduleModel(int32_t pp, int32_t vpp,
                                         int32_t microbatches, bool with_dp);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_SCHEDULE_MODEL_H_
