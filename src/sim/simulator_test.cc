// SPDX-License-Identifier: Apache-2.0
// The simulator against closed forms (whatif-method.md §4-§5), its ground
// truth, and determinism.

#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "base/f32.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::sim {
namespace {

double MeanStep(const SimulatedJob& job) {
  return PairwiseMean(job.step_times.opt);
}

double Harmonic(int n) {
  double h = 0;
  for (int i = 1; i <= n; ++i) h += 1.0 / i;
  return h;
}

// A data-parallel job: one microbatch whose forward takes `forward_ms`, no
// backward, no communication.
JobSpec DpOnly(int32_t dp, int32_t steps, double forward_ms) {
  JobSpec spec;
  spec.name = "dp-only";
  spec.job.dp = dp;
  spec.job.steps = steps;
  spec.job.gpus_per_node = 8;
  spec.compute.forward_ms = forward_ms;
  spec.compute.backward_ms = 0.0;
  return spec;
}

// iid normal compute N(100 ms, 5 ms) on N workers: the mean step is the
// expected maximum mu + sigma * e_N (e_N from whatif-method.md §5.2).
TEST(SimulatorTest, DpOnlyNormalNoiseMatchesExpectedMaximum) {
  for (auto [n, e_n] :
       {std::pair{64, 2.3437}, {1024, 3.2482}, {4096, 3.6261}}) {
    JobSpec spec = DpOnly(n, n >= 4096 ? 60 : 200, 100.0);
    spec.compute.noise = {.kind = NoiseSpec::Kind::kNormal, .sd_ms = 5.0};
    auto job = Simulate(spec, {.truth = false});
    ASSERT_TRUE(job.ok()) << job.status().message();
    const double expected = 0.100 + 0.005 * e_n;
    EXPECT_NEAR(MeanStep(*job), expected, 0.005 * expected) << "N = " << n;
  }
}

// Backup workers: with iid Exp(lambda) compute the step waits for the N-th of
// N + b workers: (H_{N+b} - H_b) / lambda.
TEST(SimulatorTest, BackupWorkersMatchOrderStatistic) {
  for (auto [n, b, steps] : {std::tuple{96, 4, 1500}, {1000, 10, 400}}) {
    JobSpec spec = DpOnly(n, steps, 100.0);
    spec.job.backup_workers = b;
    spec.compute.noise = {.kind = NoiseSpec::Kind::kExponential};
    auto job = Simulate(spec, {.truth = false});
    ASSERT_TRUE(job.ok()) << job.status().message();
    const double expected = 0.100 * (Harmonic(n + b) - Harmonic(b));
    EXPECT_NEAR(MeanStep(*job), expected, 0.01 * expected)
        << "N = " << n << ", b = " << b;
  }
}

// Two-point model: each of N workers stalls D with probability p per step:
// T0 + D * (1 - (1 - p)^N).
TEST(SimulatorTest, TwoPointStallsMatchClosedForm) {
  const int32_t n = 64;
  const double p = 0.01, d_ms = 20.0;
  JobSpec spec = DpOnly(n, 3000, 100.0);
  StragglerSpec stall;
  stall.kind = StragglerSpec::Kind::kDataloaderStall;
  stall.all_ranks = true;
  stall.probability = p;
  stall.stall_ms = d_ms;
  spec.stragglers.push_back(stall);
  auto job = Simulate(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const double expected = 0.100 + d_ms * 1e-3 * (1 - std::pow(1 - p, n));
  EXPECT_NEAR(MeanStep(*job), expected, 0.01 * expected);
  ASSERT_EQ(job->truth.size(), 1u);
  EXPECT_NEAR(job->truth[0].slowdown, expected / 0.100, 0.01);
}

// A hybrid job with one slow GPU: the truth names its rank, TP group and
// worker; the analysis of the simulated trace replays it exactly and finds
// that worker with M_W > 0.5.
TEST(SimulatorTest, SlowWorkerIsFoundByTheAnalysis) {
  JobSpec spec;
  spec.name = "small";
  spec.job = {.dp = 4,
              .pp = 4,
              .tp = 4,
              .cp = 1,
              .vpp = 1,
              .microbatches = 8,
              .steps = 6,
              .gpus_per_node = 8};
  spec.compute = {
      .forward_ms = 10,
      .backward_ms = 20,
      .optimizer_ms = 1,
      .noise = {.kind = NoiseSpec::Kind::kLognormal, .sigma = 0.02}};
  spec.comm.p2p_ms = 0.2;
  spec.comm.dp_allgather_ms = 2;
  spec.comm.dp_reducescatter_ms = 3;
  StragglerSpec slow;
  slow.kind = StragglerSpec::Kind::kSlowWorker;
  slow.rank = 39;  // ((stage 2 * 4 + dp 1) * 1 + 0) * 4 + tp 3
  slow.factor = 1.5;
  spec.stragglers.push_back(slow);
  auto job = Simulate(spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const TruthRecord& t = job->truth.at(0);
  EXPECT_EQ(t.dp, 1);
  EXPECT_EQ(t.pp, 2);
  EXPECT_EQ(t.tp, 3);
  EXPECT_EQ(t.node, 4);
  EXPECT_EQ(t.worker_rank, 36);
  EXPECT_EQ(t.tp_group, (std::vector<int64_t>{36, 37, 38, 39}));
  EXPECT_EQ(t.steps.size(), 6u);
  EXPECT_GT(t.slowdown, 1.1);

  const trace::OpsTable table = ToOpsTable(*job, 0, 5);
  auto prepared = whatif::PrepareTrace(table, MetaOf(*job));
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  auto r = whatif::Analyze(*prepared, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LT(r->self_test_max_error_s, 1e-6);
  EXPECT_EQ(r->workers.at(0).rank, 36);
  EXPECT_GT(r->fix_worst_workers.rem, 0.5);
}

// `op: backward` slows the backwards of the worker only.
TEST(SimulatorTest, SlowWorkerOfOnePass) {
  auto spec = ParseJobSpec(
      "job: {dp: 2, pp: 1, microbatches: 2, steps: 2}\n"
      "compute: {forward_ms: 4, backward_ms: 8}\n"
      "stragglers:\n  - {kind: slow_worker, rank: 1, factor: 2, op: "
      "backward}\n",
      "spec.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->stragglers[0].pass, StragglerSpec::Pass::kBackward);
  auto job = Simulate(*spec);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const trace::OpsTable table = ToOpsTable(*job, 0, 1);
  for (size_t i = 0; i < table.size(); ++i) {
    const double ms = 1e-6 * static_cast<double>(table.dur_ns[i]);
    const double slow = table.rank[i] == 1 ? 2.0 : 1.0;
    if (table.op_type[i] == trace::OpType::kForwardCompute) {
      EXPECT_NEAR(ms, 4, 1e-3);
    } else if (table.op_type[i] == trace::OpType::kBackwardCompute) {
      EXPECT_NEAR(ms, 8 * slow, 1e-3);
    }
  }
}

// The same spec and seed give the same trace; another seed other noise.
TEST(SimulatorTest, DeterministicPerSeed) {
  JobSpec spec = DpOnly(8, 4, 10.0);
  spec.job.pp = 2;
  spec.job.microbatches = 4;
  spec.compute.noise = {.kind = NoiseSpec::Kind::kLognormal, .sigma = 0.1};
  auto a = Simulate(spec), b = Simulate(spec);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ToOpsTable(*a, 0, 3).start_ns, ToOpsTable(*b, 0, 3).start_ns);
  spec.job.seed = 2;
  auto c = Simulate(spec);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(ToOpsTable(*a, 0, 3).start_ns, ToOpsTable(*c, 0, 3).start_ns);
}

// Durations at the spec's limits (issue 11): a valid spec whose products
// exceed one op's limit, or whose trace exceeds a trace's, is refused with
// the op, the step and the limit; one within them gives an int64-exact
// trace (no overflow in the table's nanoseconds).
TEST(SimulatorTest, DrawnDurationsBeyondTheOpLimitAreRefused) {
  JobSpec spec = DpOnly(2, 3, kMaxDurationMs);  // 1e6 s, the limit itself
  StragglerSpec slow;
  slow.kind = StragglerSpec::Kind::kSlowWorker;
  slow.rank = 1;
  slow.factor = 10;
  slow.steps = std::pair<int64_t, int64_t>{2, 2};
  spec.stragglers.push_back(slow);
  auto job = Simulate(spec);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            "dp-only: step 2, dp 1, stage 0: a drawn forward-compute of 1e+07 "
            "s (the spec's duration times the stage, sequence and straggler "
            "factors and the noise draw) exceeds the limit of 1e6 s for one "
            "op; lower them or the noise");
  // Heavy-tailed noise: lognormal with a large sigma draws e^(Z^2/2) times
  // the mean at most (Z below 8.5): beyond the limit for some op (Z > 2).
  JobSpec noisy = DpOnly(64, 20, kMaxDurationMs);
  noisy.compute.noise = {.kind = NoiseSpec::Kind::kLognormal, .sigma = 4};
  auto n = Simulate(noisy, {.truth = false});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("the limit of 1e6 s for one op"),
            std::string::npos)
      << n.status().message();
  // Host delays add up: two pauses of the limit before the same forward.
  JobSpec paused = DpOnly(2, 2, 10);
  StragglerSpec gc;
  gc.kind = StragglerSpec::Kind::kGcPause;
  gc.all_ranks = true;
  gc.planned_every = 1;
  gc.pause_ms = kMaxDurationMs;
  paused.stragglers = {gc, gc};
  auto p = Simulate(paused);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "dp-only: step 0, dp 0, stage 0: host delays (gc_pause, "
            "dataloader_stall) of 2e+06 s before one forward exceed the "
            "limit of 1e6 s for one op; lower them or the noise");
}

TEST(SimulatorTest, TracesBeyondTheTraceLimitAreRefused) {
  JobSpec spec = DpOnly(2, 2000, kMaxDurationMs);  // 2,000 steps of 1e6 s
  auto job = Simulate(spec);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            "dp-only: the simulated trace would last 2e+09 s (2000 steps), "
            "beyond the limit of 1e9 s of a trace; simulate fewer steps or "
            "shorter durations");
  // Within it: 900 steps of 1e6 s, every nanosecond exact in int64.
  spec.job.steps = 900;
  auto ok = Simulate(spec);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  const trace::OpsTable table = ToOpsTable(*ok, 0, 899);
  int64_t last_end = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    ASSERT_GE(table.start_ns[i], 0);
    ASSERT_GE(table.dur_ns[i], 0);
    last_end = std::max(last_end, table.start_ns[i] + table.dur_ns[i]);
  }
  EXPECT_NEAR(static_cast<double>(last_end), 9e17, 1e12);
}

// Jobs whose indexes do not fit the replay's 32 bits are refused before
// anything of their size is allocated (the CLI refuses them earlier, by
// their memory).
TEST(SimulatorTest, JobsBeyondTheReplaysIndexesAreRefused) {
  JobSpec spec = DpOnly(4, std::numeric_limits<int32_t>::max(), 10);
  auto job = Simulate(spec);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            "dp-only: the job is too large to simulate: 9 ops per step of each "
            "DP replica (at most 2^31 - 1) and 8589934588 (step, DP replica) "
            "pairs (at most 2^32 - 1)");
}

}  // namespace
}  // namespace strag::sim
