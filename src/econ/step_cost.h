// SPDX-License-Identifier: Apache-2.0
// What stragglers cost per step and per hour of a synchronous job.
//
// Every GPU waits for the step's slowest rank, so the time between the ideal
// and the observed step is lost on every GPU of the job.

#ifndef STRAG_SRC_ECON_STEP_COST_H_
#define STRAG_SRC_ECON_STEP_COST_H_

#include <cstdint>

namespace strag::econ {

struct StepCost {
  int64_t gpus = 0;
  double utilization = 0;                // mean ideal / mean observed step time
  double lost_gpu_seconds_per_step = 0;  // (observed - ideal) x gpus
  double usd_per_gpu_hour = 0;
  double wasted_usd_per_hour = 0;  // (1 - utilization) x gpus x price
  // Over a run of `run_days` wall-clock days at this pace (0: not given).
  double run_days = 0;
  double wasted_gpu_hours = 0;  // gpus x 24 x run_days x (1 - utilization)
  double wasted_usd = 0;
  double extra_days = 0;  // run_days x (1 - utilization)
};

// Adds the run-length figures to `cost`.
void AddRunLength(double run_days, StepCost* cost);

// `mean_observed_s` and `mean_ideal_s` are mean step times in seconds.
StepCost ComputeStepCost(double mean_observed_s, double mean_ideal_s,
                         int64_t gpus, double usd_per_gpu_hour);

}  // namespace strag::econ

#endif  // STRAG_SRC_ECON_STEP_COST_H_
