// SPDX-License-Identifier: Apache-2.0
// EstimateFootprint: its op counts against what the simulator builds
// (presets, shapes of every kind, random specs), and its arithmetic on
// specs far beyond any machine (no overflow, no allocation).

#include "sim/footprint.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

#include "sim/schedule_model.h"
#include "sim/simulator.h"

namespace strag::sim {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Exact: OpsPerStep is the node count of the schedule model, for both
// schedules, every edge case of pp (1, 2, more) and microbatches below,
// at and above pp (1F1B's warm-up is min(pp - stage - 1, m)).
TEST(FootprintTest, OpsPerStepIsTheScheduleModelsSize) {
  for (int32_t pp : {1, 2, 3, 4, 8}) {
    for (int32_t vpp : {1, 2, 3}) {
      for (int32_t m : {1, 2, 3, 4, 7, 8, 16}) {
        if (vpp > 1 && m % pp != 0) continue;
        for (bool with_dp : {false, true}) {
          auto model = BuildScheduleModel(pp, vpp, m, with_dp);
          ASSERT_TRUE(model.ok()) << model.status().message();
          EXPECT_EQ(OpsPerStep(pp, vpp, m, with_dp),
                    static_cast<int64_t>(model->model.keys.size()))
              << "pp " << pp << " vpp " << vpp << " m " << m << " dp "
              << with_dp;
        }
      }
    }
  }
}

// Exact: the estimate's ops are those simulated, its written ops the rows
// of the table of any window.
void ExpectExact(const JobSpec& spec) {
  auto job = Simulate(spec, {.truth = false});
  ASSERT_TRUE(job.ok()) << spec.name << ": " << job.status().message();
  const Footprint all = EstimateFootprint(spec);
  EXPECT_EQ(all.ops, static_cast<int64_t>(job->num_nodes() * job->num_lanes()))
      << spec.name;
  EXPECT_EQ(all.lanes, static_cast<int64_t>(job->num_lanes())) << spec.name;
  EXPECT_EQ(all.written_ops, 0);
  const int64_t last = spec.job.steps - 1;
  for (auto [a, b] :
       {std::pair<int64_t, int64_t>{0, last}, {last, last}, {last / 2, last}}) {
    const Footprint w = EstimateFootprint(
        spec, {.write = true, .first_step = a, .last_step = b});
    EXPECT_EQ(w.written_ops,
              static_cast<int64_t>(ToOpsTable(*job, a, b).size()))
        << spec.name << " window " << a << ":" << b;
    EXPECT_EQ(w.ops, all.ops);
    EXPECT_GE(w.bytes, all.bytes);
  }
}

TEST(FootprintTest, ExactOnPresets) {
  for (const std::string& name : PresetNames()) {
    if (name == "llama-16k") continue;  // 7.8 M ops: slow for a unit test
    auto spec = PresetSpec(name);
    ASSERT_TRUE(spec.ok()) << name;
    ExpectExact(*spec);
  }
}

TEST(FootprintTest, ExactOnRandomSpecs) {
  std::mt19937 rng(11);
  auto pick = [&](int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
  };
  for (int k = 0; k < 40; ++k) {
    JobSpec spec;
    spec.name = "random-" + std::to_string(k);
    spec.job.pp = pick(1, 6);
    spec.job.vpp = pick(0, 2) == 0 ? pick(2, 3) : 1;
    spec.job.microbatches =
        spec.job.vpp > 1 ? spec.job.pp * pick(1, 3) : pick(1, 12);
    spec.job.dp = pick(1, 6);
    spec.job.cp = pick(0, 3) == 0 ? 2 : 1;
    spec.job.tp = pick(1, 2);
    if (spec.job.pp == 1 && pick(0, 2) == 0) spec.job.backup_workers = 1;
    spec.job.steps = pick(1, 5);
    spec.sequences.per_microbatch = pick(1, 3);
    ExpectExact(spec);
  }
}

// The bytes grow with everything the run holds, part by part.
TEST(FootprintTest, BytesFollowTheParts) {
  JobSpec spec;
  spec.job = {.dp = 8, .pp = 4, .microbatches = 8, .steps = 10};
  const Footprint sim = EstimateFootprint(spec);
  const Footprint out = EstimateFootprint(spec, {.write = true});
  const Footprint one =
      EstimateFootprint(spec, {.write = true, .first_step = 3, .last_step = 3});
  const Footprint ana = EstimateFootprint(spec, {.analyze = true});
  EXPECT_EQ(sim.write_bytes, 0);
  EXPECT_GT(out.write_bytes, 9 * one.write_bytes);
  EXPECT_EQ(out.written_ops, 10 * one.written_ops);
  EXPECT_GT(ana.analyze_bytes, 0);
  EXPECT_EQ(out.bytes, out.simulate_bytes + out.sequence_bytes +
                           std::max(out.write_bytes, out.analyze_bytes));
  // Sequences: their vectors always, their text when longer than a short
  // string.
  spec.sequences.per_microbatch = 64;
  const Footprint seq = EstimateFootprint(spec, {.write = true});
  EXPECT_EQ(seq.sequence_lengths, out.lanes * 8 * 64);
  EXPECT_GT(seq.sequence_bytes, 3 * seq.sequence_lengths * 5);
  // The steps override is the job with that many steps.
  JobSpec three = spec;
  three.job.steps = 3;
  EXPECT_EQ(EstimateFootprint(spec, {.steps = 3}).bytes,
            EstimateFootprint(three).bytes);
}

// The cases of issue 11: far beyond memory, counted without overflow
// (saturating at INT64_MAX where the product exceeds it).
TEST(FootprintTest, HugeSpecsSaturate) {
  JobSpec wide;
  wide.job.dp = 10'000'000;
  EXPECT_EQ(EstimateFootprint(wide).ops, int64_t{10'000'000} * 9);
  JobSpec steps;
  steps.job.steps = 1'000'000'000;
  EXPECT_EQ(EstimateFootprint(steps).ops, int64_t{1'000'000'000} * 7);
  JobSpec mb;
  mb.job.microbatches = 1'000'000'000;
  EXPECT_EQ(EstimateFootprint(mb).ops, int64_t{2'000'000'000} + 5);
  JobSpec seq;
  seq.sequences.per_microbatch = 1'000'000'000;
  EXPECT_GT(EstimateFootprint(seq).bytes, int64_t{8'000'000'000});
  // 65,536 GPUs (DP 1024 x PP 8 x TP 8), 64 microbatches, 100 steps.
  JobSpec big;
  big.job = {.dp = 1024, .pp = 8, .tp = 8, .microbatches = 64, .steps = 100};
  const Footprint b = EstimateFootprint(big, {.write = true});
  EXPECT_EQ(b.ops_per_step, OpsPerStep(8, 1, 64, true));
  EXPECT_EQ(b.ops, b.ops_per_step * 1024 * 100);
  EXPECT_GT(b.bytes, int64_t{90'000'000'000});
  // Everything at its maximum: 2^31 - 1 each.
  JobSpec all;
  const int32_t m = std::numeric_limits<int32_t>::max();
  all.job = {.dp = m, .pp = m, .vpp = m, .microbatches = m, .steps = m};
  all.sequences.per_microbatch = m;
  const Footprint f = EstimateFootprint(all, {.write = true, .analyze = true});
  EXPECT_EQ(f.ops_per_step, kMax);
  EXPECT_EQ(f.ops, kMax);
  EXPECT_EQ(f.bytes, kMax);
}

}  // namespace
}  // namespace strag::sim
