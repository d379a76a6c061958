// SPDX-License-Identifier: Apache-2.0
// What a whole training run loses to stragglers, from its slowdown S.
//
// S = (step time with stragglers) / (ideal step time). The run as it went
// (with stragglers) used `gpu_hours`; without stragglers the same work would
// have taken 1/S of that, so the share 1 - 1/S of the GPU-hours and of the
// wall-clock time is lost.

#ifndef STRAG_SRC_ECON_RUN_COST_H_
#define STRAG_SRC_ECON_RUN_COST_H_

#include <cstdint>

#include "base/status.h"

namespace strag::econ {

struct RunCost {
  int64_t gpus = 0;
  double days = 0;  // the run's wall-clock length, with stragglers
  double usd_per_gpu_hour = 0;
  double slowdown = 1;          // S >= 1
  double gpu_hours = 0;         // gpus x days x 24
  double wasted_share = 0;      // 1 - 1/S
  double wasted_gpu_hours = 0;  // gpu_hours x (1 - 1/S)
  double wasted_usd = 0;        // wasted_gpu_hours x usd_per_gpu_hour
  double extra_days = 0;        // days x (1 - 1/S): how much sooner it ends
};

// Fails (kInvalidInput, naming the argument) unless slowdown >= 1, gpus >= 1,
// days > 0 and usd_per_gpu_hour >= 0, all finite.
Result<RunCost> ComputeRunCost(double slowdown, int64_t gpus, double days,
                               double usd_per_gpu_hour);

}  // namespace strag::econ

#endif  // STRAG_SRC_ECON_RUN_COST_H_
