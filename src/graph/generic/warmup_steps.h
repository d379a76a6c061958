// SPDX-License-Identifier: Apache-2.0
// Warm-up steps: the first profiled steps of a job often run many times
// slower than the rest (allocator, autotuning, lazy initialisation, the
// profiler starting up). They are not stragglers, and a mean over steps
// that includes one is mostly that step. Leading steps whose span exceeds
// kWarmupFactor x the median step's are left out, and said so; a slow step
// later in the run is kept (a transient straggler is the analysis' business).

#ifndef STRAG_SRC_GRAPH_GENERIC_WARMUP_STEPS_H_
#define STRAG_SRC_GRAPH_GENERIC_WARMUP_STEPS_H_

#include <cstdint>
#include <vector>

#include "graph/generic/generic_model.h"

namespace strag::graph {

inline constexpr double kWarmupFactor = 4.0;

// Removes the leading warm-up steps of `model` (never all of them, nor any
// when fewer than 3 steps are kept); returns their ids.
std::vector<int64_t> DropWarmupSteps(GenericModel* model);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_WARMUP_STEPS_H_
