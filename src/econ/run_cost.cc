// SPDX-License-Identifier: Apache-2.0
#include "econ/run_cost.h"

#include <cmath>

namespace strag::econ {

Result<RunCost> ComputeRunCost(double slowdown, int64_t gpus, double days,
                               double usd_per_gpu_hour) {
  if (!std::isfinite(slowdown) || slowdown < 1) {
    return InvalidInput(
        "slowdown S must be >= 1 (step time with stragglers / ideal step "
        "time)");
  }
  if (gpus < 1) return InvalidInput("the number of GPUs must be >= 1");
  if (!std::isfinite(days) || days <= 0) {
    return InvalidInput("the run length must be positive");
  }
  if (!std::isfinite(usd_per_gpu_hour) || usd_per_gpu_hour < 0) {
    return InvalidInput("the GPU price must not be negative");
  }
  RunCost c;
  c.gpus = gpus;
  c.days = days;
  c.usd_per_gpu_hour = usd_per_gpu_hour;
  c.slowdown = slowdown;
  c.gpu_hours = static_cast<double>(gpus) * days * 24;
  // (S - 1) / S rather than 1 - 1/S: exact 0 at S = 1 and no cancellation
  // near it.
  c.wasted_share = (slowdown - 1) / slowdown;
  c.wasted_gpu_hours = c.gpu_hours * c.wasted_share;
  c.wasted_usd = c.wasted_gpu_hours * usd_per_gpu_hour;
  c.extra_days = days * c.wasted_share;
  if (!std::isfinite(c.gpu_hours) || !std::isfinite(c.wasted_usd)) {
    return InvalidInput(
        "GPUs x days x price is too large to compute (the GPU-hours or "
        "dollars overflow a double)");
  }
  return c;
}

}  // namespace strag::econ
