// SPDX-License-Identifier: Apache-2.0
// The cost figures of an analysed job, from its layout and a GPU price.

#ifndef STRAG_SRC_CLI_JOB_COST_H_
#define STRAG_SRC_CLI_JOB_COST_H_

#include <optional>

#include "base/status.h"
#include "cli/flags.h"
#include "econ/step_cost.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"

namespace strag::cli {

inline constexpr double kDefaultUsdPerGpuHour = 2.0;

// GPUs = the job's world size (dp and pp as analysed, tp and cp from the
// metadata); price = `usd_per_gpu_hour`, else the metadata's
// `gpu_hour_usd`, else kDefaultUsdPerGpuHour.
econ::StepCost JobCost(const whatif::WhatIfResult& result,
                       const trace::JobMeta& meta,
                       std::optional<double> usd_per_gpu_hour);

// Colour only on a terminal, and never with NO_COLOR set.
bool UseColor();

// The metadata's gpus_per_node, else 8.
int32_t GpusPerNode(const trace::JobMeta& meta);

// --usd-per-gpu-hour, checked (>= 0).
Result<std::optional<double>> UsdPerGpuHour(const Flags& flags);

// The cost of the analysed job from the flags --usd-per-gpu-hour, --gpus
// (default: the world size) and --days / --hours (default: one day).
Result<econ::StepCost> CostFromFlags(const Flags& flags,
                                     const whatif::WhatIfResult& result,
                                     const trace::JobMeta& meta);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_JOB_COST_H_
