// SPDX-License-Identifier: Apache-2.0
#include "econ/step_cost.h"

#include <gtest/gtest.h>

namespace strag::econ {
namespace {

// The motivating example: 4,096 GPUs, 100 ms ideal steps, one worker at
// 120 ms: the others are busy 83.3% of each step and 81.9 GPU-seconds are
// lost per step (4,096 x 20 ms).
TEST(StepCostTest, MotivatingExample) {
  const StepCost c = ComputeStepCost(0.120, 0.100, 4096, 2.0);
  EXPECT_NEAR(c.utilization, 0.8333, 1e-4);
  EXPECT_NEAR(c.lost_gpu_seconds_per_step, 81.92, 1e-9);
  EXPECT_NEAR(c.wasted_usd_per_hour, 4096 * 2.0 / 6, 1e-9);
}

// Ten days of the motivating example's pace: 4096 x 240 GPU-hours, a sixth
// of them lost.
TEST(StepCostTest, RunLength) {
  StepCost c = ComputeStepCost(0.120, 0.100, 4096, 2.0);
  AddRunLength(10, &c);
  EXPECT_NEAR(c.wasted_gpu_hours, 4096 * 240 / 6.0, 1e-6);
  EXPECT_NEAR(c.wasted_usd, 2 * 4096 * 240 / 6.0, 1e-6);
  EXPECT_NEAR(c.extra_days, 10 / 6.0, 1e-12);
}

// A healthy job loses nothing; a zero step time is not a division by zero.
TEST(StepCostTest, EdgeCases) {
  EXPECT_DOUBLE_EQ(ComputeStepCost(1.0, 1.0, 8, 2.0).lost_gpu_seconds_per_step,
                   0);
  EXPECT_DOUBLE_EQ(ComputeStepCost(0.0, 0.0, 8, 2.0).utilization, 0);
}

}  // namespace
}  // namespace strag::econ
