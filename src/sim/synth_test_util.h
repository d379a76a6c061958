// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tests that synthesise jobs and analyse them.

#ifndef STRAG_SRC_SIM_SYNTH_TEST_UTIL_H_
#define STRAG_SRC_SIM_SYNTH_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "sim/trace_synth.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::sim {

// Forward / backward take t_f / t_b per microbatch of a whole stage (split
// over `vpp` chunks), everything else nothing.
inline CostFn ComputeOnly(double t_f, double t_b, int32_t vpp = 1) {
  return [=](const SynthOp& op) {
    if (op.type == trace::OpType::kForwardCompute) return t_f / vpp;
    if (op.type == trace::OpType::kBackwardCompute) return t_b / vpp;
    return 0.0;
  };
}

// The what-if analysis of a synthesised table (failures are test failures).
inline whatif::WhatIfResult AnalyzeTable(const trace::OpsTable& table,
                                         whatif::WhatIfOptions options = {}) {
  auto prepared = whatif::PrepareTrace(table, trace::JobMeta{});
  EXPECT_TRUE(prepared.ok()) << prepared.status().message();
  auto result = whatif::Analyze(*prepared, options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : whatif::WhatIfResult{};
}

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_SYNTH_TEST_UTIL_H_
