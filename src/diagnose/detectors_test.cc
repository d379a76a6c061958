// SPDX-License-Identifier: Apache-2.0
// Unit tests of the detectors that read only the what-if result, on
// hand-made results: the thresholds and the outlier rules, one by one.
// (Detectors over the prepared trace are tested end to end on simulated
// jobs: tests/diagnose/simulated_causes_test.cc, and real runs:
// bench/accuracy.)

#include "diagnose/detectors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "diagnose/evidence.h"

namespace strag::diagnose {
namespace {

// A result of `scores.size()` ranks (kRanks, one stage each unless `stages`
// says), the first worst, with M_W = `m_w`, over `steps` steps in which
// rank `slowest` is the worst in every step.
whatif::WhatIfResult Result(const std::vector<double>& scores, double m_w,
                            std::vector<int32_t> stages = {}, size_t steps = 4,
                            size_t slowest = 0) {
  whatif::WhatIfResult r;
  r.layout = whatif::Layout::kRanks;
  r.slowdown = 1.3;
  r.launch_slowdown = 1.0;
  r.steps.resize(steps);
  r.fix_worst_workers.rem = m_w;
  r.fix_worst_workers.ranks = {0};
  if (stages.empty()) stages.assign(scores.size(), 0);
  r.topology.pp = 1 + *std::max_element(stages.begin(), stages.end());
  for (size_t k = 0; k < scores.size(); ++k) {
    const auto rank = static_cast<int32_t>(k);
    r.workers.push_back({rank, 0, rank, scores[k]});
    r.topology.places.push_back({rank, 0, stages[k], 0, 0, 0});
    r.by_stage.keys.push_back(std::to_string(k));
    r.by_stage.slowdown.push_back(scores[k]);
    r.by_stage.per_step.push_back(
        std::vector<double>(steps, k == slowest ? 2.0 : 1.0));
  }
  return r;
}

TEST(DetectorsTest, FaultyWorkerIsAnOutlier) {
  // One rank 1.3x, the others at noise: confident.
  const Finding f = DetectFaultyWorker(Result({1.30, 1.01, 1.02, 1.01}, 0.9));
  EXPECT_GE(f.confidence, 0.85);
  EXPECT_DOUBLE_EQ(f.step_share, 1.0);
  // Everyone a little slow (scheduling noise): no outlier, no finding.
  const Finding noise =
      DetectFaultyWorker(Result({1.08, 1.06, 1.07, 1.05}, 0.9));
  EXPECT_LT(noise.confidence, 0.2) << noise.evidence;
}

TEST(DetectorsTest, FaultyWorkerMustBeSlowestInMostSteps) {
  // The same outlier score, but another rank is the worst in every step
  // (a transient spike on rank 0 in the mean): low confidence.
  const Finding f = DetectFaultyWorker(
      Result({1.30, 1.01, 1.02, 1.01}, 0.9, {}, 4, /*slowest=*/1));
  EXPECT_LT(f.confidence, 0.2);
}

TEST(DetectorsTest, LoneWorkerOfAStageIsNotCalledFaulty) {
  // A pure pipeline: the slow rank has no replica to compare with, so a
  // faulty worker cannot be told from a heavy stage: half the confidence.
  const Finding alone =
      DetectFaultyWorker(Result({1.30, 1.01, 1.02, 1.01}, 0.9, {0, 1, 2, 3}));
  const Finding peers =
      DetectFaultyWorker(Result({1.30, 1.01, 1.02, 1.01}, 0.9, {0, 0, 1, 1}));
  EXPECT_NEAR(alone.confidence, 0.5 * peers.confidence, 1e-9);
}

TEST(DetectorsTest, ALeadWithinTheJobsNoiseIsNotAFaultyWorker) {
  // Two ranks; rank 0 is ahead by 5% on average but behind in some steps
  // (scheduling noise of a small job): its margin is under 1 SD.
  whatif::WhatIfResult r = Result({1.05, 1.0}, 0.9, {}, 6);
  r.by_stage.per_step = {{1.20, 1.00, 1.10, 1.00, 1.02, 1.00},
                         {1.00, 1.05, 1.00, 1.04, 1.00, 1.00}};
  EXPECT_LT(MarginOverNoise(r, r.workers.front()), 1.0);
  EXPECT_LT(DetectFaultyWorker(r).confidence, 0.2);
  // The same lead in every step: far out of the noise.
  r.by_stage.per_step = {{1.05, 1.06, 1.05, 1.04, 1.05, 1.05},
                         {1.00, 1.00, 1.00, 1.00, 1.00, 1.00}};
  EXPECT_GT(MarginOverNoise(r, r.workers.front()), 3.0);
  // One step: nothing to judge the noise by.
  EXPECT_TRUE(std::isinf(MarginOverNoise(Result({1.3, 1.0}, 0.9, {}, 1),
                                         whatif::WorkerScore{0, 0, 0, 1.3})));
  // A capture of 3 steps whose straggler is the slowest in each, one step
  // noisier than the others (a live-run capture): too few steps to judge
  // the noise by, so the share and the ratio decide.
  whatif::WhatIfResult capture = Result({1.08, 1.0}, 0.8, {}, 3);
  capture.by_stage.per_step = {{1.02, 1.11, 1.10}, {1.0, 1.0, 1.0}};
  EXPECT_TRUE(std::isinf(MarginOverNoise(capture, capture.workers.front())));
  EXPECT_GT(DetectFaultyWorker(capture).confidence, 0.5);
}

TEST(DetectorsTest, CommunicationSpikesInAFewStepsAreNoise) {
  whatif::WhatIfResult r = Result({1.1, 1.1}, 0.1, {}, 10);
  r.by_optype.keys = {"compute", "all-reduce"};
  r.by_optype.slowdown = {1.01, 1.12};
  r.by_optype.per_step = {std::vector<double>(10, 1.01),
                          {1, 1, 1, 1.6, 1, 1, 1, 1.6, 1, 1}};
  EXPECT_EQ(DetectCommunication(r).confidence, 0.0);
  r.by_optype.per_step[1].assign(10, 1.12);  // every step: a slow link
  EXPECT_GT(DetectCommunication(r).confidence, 0.9);
}

TEST(DetectorsTest, CommunicationDominates) {
  whatif::WhatIfResult r = Result({1.1, 1.1}, 0.1);
  r.by_optype.keys = {"compute", "all-reduce"};
  r.by_optype.slowdown = {1.01, 1.20};
  const Finding f = DetectCommunication(r);
  EXPECT_GT(f.confidence, 0.9);
  r.by_optype.slowdown = {1.20, 1.01};
  EXPECT_LT(DetectCommunication(r).confidence, 0.1);
}

TEST(DetectorsTest, HealthyUnderFivePercent) {
  whatif::WhatIfResult r = Result({1.01, 1.01}, 0.1);
  r.slowdown = 1.04;
  EXPECT_EQ(DetectHealthy(r).confidence, 1.0);
  r.slowdown = 1.06;
  EXPECT_EQ(DetectHealthy(r).confidence, 0.0);
}

TEST(DetectorsTest, EvidenceHelpers) {
  EXPECT_EQ(Clamp01(2.0), 1.0);
  EXPECT_EQ(Clamp01(-1.0), 0.0);
  EXPECT_NEAR(Pearson({1, 2, 3, 4}, {2, 4, 6, 8}), 1.0, 1e-12);
  EXPECT_TRUE(IsCommGroup("all-reduce"));
  EXPECT_FALSE(IsCommGroup("compute"));
}

}  // namespace
}  // namespace strag::diagnose
