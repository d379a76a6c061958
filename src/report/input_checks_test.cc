// SPDX-License-Identifier: Apache-2.0
#include "report/input_checks.h"

#include <gtest/gtest.h>

namespace strag::report {
namespace {

trace::RankTrace RankWithSteps(int32_t rank, int64_t step_ns) {
  trace::RankTrace r;
  r.rank = rank;
  r.source = "rank-" + std::to_string(rank) + ".json";
  for (int64_t i = 0; i < 5; ++i) {
    r.steps.push_back({.id = i,
                       .start_ns = i * step_ns,
                       .end_ns = i * step_ns + step_ns - i});
  }
  return r;
}

TEST(InputChecksTest, NamesTheRankInAnotherUnit) {
  std::vector<trace::RankTrace> ranks;
  for (int32_t r = 0; r < 4; ++r) {
    ranks.push_back(RankWithSteps(r, r == 1 ? 26'000'000'000 : 26'000'000));
  }
  const std::string problem = UnitMismatch(ranks);
  EXPECT_NE(problem.find("rank 1 (rank-1.json)"), std::string::npos) << problem;
  EXPECT_NE(problem.find("1000x as long"), std::string::npos) << problem;
  EXPECT_NE(problem.find("nanoseconds"), std::string::npos) << problem;
}

TEST(InputChecksTest, StepsOfOneScaleAreNoMismatch) {
  std::vector<trace::RankTrace> ranks;
  // A straggler makes a step a few times longer, never 100x.
  for (int32_t r = 0; r < 4; ++r) {
    ranks.push_back(RankWithSteps(r, r == 2 ? 90'000'000 : 26'000'000));
  }
  EXPECT_EQ(UnitMismatch(ranks), "");
  EXPECT_EQ(MedianStepSpanNs(ranks), 26'000'000 - 2);
}

TEST(InputChecksTest, ClockFitAgainstTheStep) {
  ClockNotes clock;
  clock.residual_max_us = 40;
  clock.residual_p99_us = 10;
  clock.collectives = 12;
  EXPECT_EQ(ImplausibleClockFit(clock, 26'000'000), "");
  clock.residual_p99_us = 8000;  // 30% of a 26 ms step
  EXPECT_NE(ImplausibleClockFit(clock, 26'000'000), "");
  clock.residual_p99_us = 10;
  clock.residual_max_us = 27000;  // more than a step
  EXPECT_NE(ImplausibleClockFit(clock, 26'000'000), "");
}

whatif::PreparedTrace Shape(int32_t dp, int32_t pp) {
  whatif::PreparedTrace t;
  t.dp = dp;
  t.pp = pp;
  for (int32_t d = 0; d < dp; ++d) {
    for (int32_t s = 0; s < pp; ++s) t.workers.push_back({d * pp + s, d, s});
  }
  return t;
}

TEST(InputChecksTest, MetadataAgainstTheTrace) {
  const whatif::PreparedTrace t = Shape(4, 4);
  trace::JobMeta meta;
  meta.dp = 4;
  meta.pp = 4;
  meta.tp = 4;
  meta.world_size = 64;
  auto ok = CheckMeta(meta, t, nullptr);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->empty());

  meta.pp = 8;  // survivable: the trace's stages are used
  ok = CheckMeta(meta, t, nullptr);
  ASSERT_TRUE(ok.ok());
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_NE((*ok)[0].find("pp 8"), std::string::npos);

  meta.pp = 4;
  meta.world_size = 100;  // would price 100 GPUs
  auto bad = CheckMeta(meta, t, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("world_size 100"), std::string::npos);
  EXPECT_NE(bad.status().message().find("= 64"), std::string::npos);

  meta.world_size = 0;
  meta.tp = 2147483647;  // no overflow: refused by size
  bad = CheckMeta(meta, t, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("largest world"), std::string::npos);

  meta.tp = 1;
  meta.world_size = 8;  // 16 workers of ranks up to 15
  bad = CheckMeta(meta, t, nullptr);
  ASSERT_FALSE(bad.ok());
}

}  // namespace
}  // namespace strag::report
