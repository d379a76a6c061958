// SPDX-License-Identifier: Apache-2.0
#include "econ/step_cost.h"

namespace strag::econ {

StepCost ComputeStepCost(double mean_observed_s, double mean_ideal_s,
                         int64_t gpus, double usd_per_gpu_hour) {
  StepCost c;
  c.gpus = gpus;
  c.usd_per_gpu_hour = usd_per_gpu_hour;
  if (mean_observed_s <= 0) return c;
  c.utilization = mean_ideal_s / mean_observed_s;
  const auto n = static_cast<double>(gpus);
  c.lost_gpu_seconds_per_step = (mean_observed_s - mean_ideal_s) * n;
  c.wasted_usd_per_hour = (1.0 - c.utilization) * n * usd_per_gpu_hour;
  return c;
}

void AddRunLength(double run_days, StepCost* cost) {
  const double lost = cost->utilization > 0 ? 1.0 - cost->utilization : 0.0;
  cost->run_days = run_days;
  cost->wasted_gpu_hours =
      static_cast<double>(cost->gpus) * 24.0 * run_days * lost;
  cost->wasted_usd = cost->wasted_gpu_hours * cost->usd_per_gpu_hour;
  cost->extra_days = run_days * lost;
}

}  // namespace strag::econ
