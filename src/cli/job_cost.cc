// SPDX-License-Identifier: Apache-2.0
#include "cli/job_cost.h"

#include <unistd.h>

#include <cstdlib>

#include "base/f32.h"
#include "cli/flags.h"

namespace strag::cli {

econ::StepCost JobCost(const whatif::WhatIfResult& result,
                       const trace::JobMeta& meta,
                       std::optional<double> usd_per_gpu_hour) {
  trace::JobMeta shape = meta;
  shape.dp = result.dp;
  shape.pp = result.pp;
  double price = kDefaultUsdPerGpuHour;
  for (const auto& [key, value] : meta.raw) {
    if (key == "gpu_hour_usd") price = std::strtod(value.c_str(), nullptr);
  }
  if (usd_per_gpu_hour) price = *usd_per_gpu_hour;
  return econ::ComputeStepCost(PairwiseMean(result.step_t_observed),
                               PairwiseMean(result.step_t_ideal),
                               shape.WorldSize(), price);
}

bool UseColor() {
  return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
}

int32_t GpusPerNode(const trace::JobMeta& meta) {
  for (const auto& [key, value] : meta.raw) {
    if (key == "gpus_per_node") {
      const long n = std::strtol(value.c_str(), nullptr, 10);
      if (n > 0 && n < (1 << 20)) return static_cast<int32_t>(n);
    }
  }
  return 8;
}

Result<std::optional<double>> UsdPerGpuHour(const Flags& flags) {
  ASSIGN_OR_RETURN(std::optional<double> price,
                   flags.GetDouble("usd-per-gpu-hour"));
  if (price && *price < 0) {
    return InvalidInput("flag --usd-per-gpu-hour: must not be negative");
  }
  return price;
}

Result<econ::StepCost> CostFromFlags(const Flags& flags,
                                     const whatif::WhatIfResult& result,
                                     const trace::JobMeta& meta) {
  ASSIGN_OR_RETURN(std::optional<double> price, UsdPerGpuHour(flags));
  econ::StepCost cost = JobCost(result, meta, price);
  ASSIGN_OR_RETURN(std::optional<int64_t> gpus, flags.GetInt("gpus"));
  if (gpus) {
    if (*gpus < 1) return InvalidInput("flag --gpus: must be at least 1");
    cost = econ::ComputeStepCost(PairwiseMean(result.step_t_observed),
                                 PairwiseMean(result.step_t_ideal), *gpus,
                                 cost.usd_per_gpu_hour);
  }
  ASSIGN_OR_RETURN(std::optional<double> days, flags.GetDouble("days"));
  ASSIGN_OR_RETURN(std::optional<double> hours, flags.GetDouble("hours"));
  if (days && hours) return InvalidInput("give --days or --hours, not both");
  const double run_days = days ? *days : hours ? *hours / 24.0 : 1.0;
  if (!(run_days > 0))
    return InvalidInput("flags --days / --hours: must be positive");
  econ::AddRunLength(run_days, &cost);
  return cost;
}

}  // namespace strag::cli
