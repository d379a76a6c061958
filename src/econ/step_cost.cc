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

}  // namespace strag::econ
