// SPDX-License-Identifier: Apache-2.0
#include "econ/run_cost.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strag::econ {
namespace {

// The motivating example: 4,096 GPUs for 10 days are 983,040 GPU-hours; at
// S = 1/0.9 (the step takes 1/0.9 of its ideal time) 10% of them, 98,304
// GPU-hours, are lost: $196,608 at $2/GPU-hour, and the run ends a day late.
TEST(RunCostTest, MotivatingExample) {
  const Result<RunCost> c = ComputeRunCost(1 / 0.9, 4096, 10, 2.0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->gpu_hours, 983040);
  EXPECT_NEAR(c->wasted_share, 0.1, 1e-12);
  EXPECT_NEAR(c->wasted_gpu_hours, 98304, 1e-6);
  EXPECT_NEAR(c->wasted_usd, 196608, 1e-6);
  EXPECT_NEAR(c->extra_days, 1.0, 1e-12);
}

// S = 1.5: a third of the GPU-hours and of the days are lost.
TEST(RunCostTest, LargeSlowdown) {
  const Result<RunCost> c = ComputeRunCost(1.5, 8, 0.5, 3.0);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->gpu_hours, 96);
  EXPECT_NEAR(c->wasted_gpu_hours, 32, 1e-12);
  EXPECT_NEAR(c->wasted_usd, 96, 1e-12);
  EXPECT_NEAR(c->extra_days, 1.0 / 6, 1e-12);
}

TEST(RunCostTest, HealthyJobLosesNothing) {
  const Result<RunCost> c = ComputeRunCost(1.0, 64, 1, 2.0);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->wasted_gpu_hours, 0);
  EXPECT_EQ(c->extra_days, 0);
}

TEST(RunCostTest, RejectsBadInput) {
  EXPECT_EQ(ComputeRunCost(0.9, 8, 1, 2).status().code(),
            StatusCode::kInvalidInput);
  EXPECT_EQ(ComputeRunCost(1.1, 0, 1, 2).status().code(),
            StatusCode::kInvalidInput);
  EXPECT_EQ(ComputeRunCost(1.1, 8, 0, 2).status().code(),
            StatusCode::kInvalidInput);
  EXPECT_EQ(ComputeRunCost(1.1, 8, 1, -1).status().code(),
            StatusCode::kInvalidInput);
  EXPECT_FALSE(ComputeRunCost(NAN, 8, 1, 2).ok());
}

}  // namespace
}  // namespace strag::econ
