// SPDX-License-Identifier: Apache-2.0
// UnfixEachWorker against brute force: for every worker of each job, the
// "un-fix only this worker" replay of ScenarioRunner (and Analyze's own
// `--unfix rank=R` counterfactual) must give the same step times bit for
// bit. Jobs: synthesized (a slow worker, a heavy last stage, a slow link,
// two equally slow ranks, costs below the ideal, interleaved 1F1B),
// simulated (noise, GC pauses, a slow worker and link), a profiler-trace
// layout (Layout::kRanks, through the Kineto export), and the published
// traces when the shared data is present.

#include "whatif/worker_attribution.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/f32.h"
#include "graph/generic/generic_model.h"
#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/kineto_writer.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "sim/trace_synth.h"
#include "whatif/analysis.h"
#include "whatif/prepared_generic.h"
#include "whatif/published_traces_test_util.h"
#include "whatif/scenario_runner.h"
#include "whatif/selection.h"

namespace strag::whatif {
namespace {

using trace::OpType;

PreparedTrace Synth(const sim::SynthJob& spec, const sim::CostFn& cost) {
  auto table = sim::SynthesizeTrace(spec, cost);
  EXPECT_TRUE(table.ok()) << table.status().message();
  auto prepared = PrepareTrace(*table, {});
  EXPECT_TRUE(prepared.ok()) << prepared.status().message();
  return std::move(prepared).value();
}

// Forward 10 ms, backward 20 ms, comm 1 ms, times `factor(op)`.
sim::CostFn Scaled(std::function<double(const sim::SynthOp&)> factor) {
  return [factor](const sim::SynthOp& op) {
    const double base = op.type == OpType::kForwardCompute    ? 0.010
                        : op.type == OpType::kBackwardCompute ? 0.020
                                                              : 0.001;
    return base * factor(op);
  };
}

// A deterministic factor in [lo, hi) per op: costs above and below the
// pooled ideal, no two alike.
double Jitter(const sim::SynthOp& op, double lo, double hi) {
  uint64_t h = static_cast<uint64_t>(op.step) * 0x9E3779B97F4A7C15ull;
  h ^= static_cast<uint64_t>(op.dp * 131 + op.stage * 7919 +
                             static_cast<int>(op.type) * 31 + op.seq_id + 1) *
       0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  return lo + (hi - lo) * static_cast<double>(h >> 11) * 0x1.0p-53;
}

struct Compared {
  WorkerUnfix unfix;
  double t_ideal = 0;  // mean ideal span
  size_t workers = 0;
};

// The check: every worker's per-step spans and mean, bit-identical to
// ScenarioRunner's un-fix of that worker alone and to Analyze's --unfix.
Compared ExpectExact(const PreparedTrace& t, size_t threads = 2) {
  WhatIfOptions plain;
  plain.threads = 1;
  auto analysed = Analyze(t, plain);
  EXPECT_TRUE(analysed.ok()) << analysed.status().message();
  if (!analysed.ok()) return {};
  const UnfixCosts costs = DeriveUnfixCosts(t, analysed->ideal_node_cost);
  auto unfix = UnfixEachWorker(t, costs.traced, costs.ideal,
                               {.threads = threads, .measure_cone = true});
  EXPECT_TRUE(unfix.ok()) << unfix.status().message();
  if (!unfix.ok()) return {};
  const size_t steps = t.steps.size();
  EXPECT_EQ(unfix->mean_step_s.size(), t.workers.size());
  EXPECT_EQ(unfix->step_s.size(), t.workers.size() * steps);
  EXPECT_LE(unfix->changed_ops, unfix->replayed_ops);

  ScenarioRunner runner(t);
  runner.SetCosts(costs.traced, costs.ideal);
  WhatIfOptions each = plain;
  for (size_t k = 0; k < t.workers.size(); ++k) {
    const Worker& w = t.workers[k];
    const replay::StepTimes brute =
        runner.Run(Base::kIdeal, SelectWorkers(t, {w}));
    for (size_t s = 0; s < steps; ++s) {
      EXPECT_EQ(unfix->step_s[k * steps + s], brute.span[s])
          << "rank " << w.rank << " (dp " << w.dp << ", stage " << w.pp
          << ") step " << t.steps[s];
    }
    EXPECT_EQ(unfix->mean_step_s[k], PairwiseMean(brute.span))
        << "rank " << w.rank;
    for (size_t s = 0; s < steps; ++s) {
      EXPECT_EQ(unfix->step_opt_s[k * steps + s], brute.opt[s])
          << "rank " << w.rank << " step " << t.steps[s];
    }
    EXPECT_EQ(unfix->mean_opt_s[k], PairwiseMean(brute.opt));
    each.unfix.push_back("rank=" + std::to_string(w.rank));
  }
  // The analysis' own counterfactual: proves DeriveUnfixCosts hands the
  // same inputs as Analyze does.
  auto with_unfix = Analyze(t, each);
  EXPECT_TRUE(with_unfix.ok()) << with_unfix.status().message();
  if (with_unfix.ok()) {
    EXPECT_EQ(with_unfix->selected.size(), t.workers.size());
    for (size_t k = 0; k < with_unfix->selected.size(); ++k) {
      EXPECT_EQ(unfix->mean_step_s[k], with_unfix->selected[k].t_add)
          << with_unfix->selected[k].selector;
    }
  }
  Compared out;
  out.t_ideal = PairwiseMean(analysed->step_t_ideal);
  out.workers = t.workers.size();
  out.unfix = std::move(unfix).value();
  return out;
}

size_t Argmax(const std::vector<double>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

size_t IndexOf(const PreparedTrace& t, int32_t dp, int32_t pp) {
  for (size_t k = 0; k < t.workers.size(); ++k) {
    if (t.workers[k].dp == dp && t.workers[k].pp == pp) return k;
  }
  ADD_FAILURE() << "no worker dp " << dp << " stage " << pp;
  return 0;
}

TEST(UnfixEachWorkerTest, SlowWorkerIsExactAndTheWorst) {
  const PreparedTrace t =
      Synth({.dp = 4, .pp = 2, .microbatches = 4, .steps = {0, 1, 2}},
            Scaled([](const sim::SynthOp& op) {
              return op.dp == 2 && op.stage == 1 ? 1.5 : 1.0;
            }));
  const Compared c = ExpectExact(t);
  ASSERT_EQ(c.workers, 8u);
  EXPECT_EQ(Argmax(c.unfix.mean_step_s), IndexOf(t, 2, 1));
  EXPECT_GT(c.unfix.mean_step_s[IndexOf(t, 2, 1)], c.t_ideal * 1.1);
}

TEST(UnfixEachWorkerTest, HeavyLastStage) {
  const PreparedTrace t =
      Synth({.dp = 2, .pp = 4, .microbatches = 8, .steps = {0, 1}},
            Scaled([](const sim::SynthOp& op) {
              return op.stage == 3 && trace::IsCompute(op.type) ? 1.6 : 1.0;
            }));
  const Compared c = ExpectExact(t);
  // Both last-stage workers are the worst, and equally so (same costs).
  EXPECT_EQ(c.unfix.mean_step_s[IndexOf(t, 0, 3)],
            c.unfix.mean_step_s[IndexOf(t, 1, 3)]);
  EXPECT_EQ(c.unfix.mean_step_s[Argmax(c.unfix.mean_step_s)],
            c.unfix.mean_step_s[IndexOf(t, 0, 3)]);
}

TEST(UnfixEachWorkerTest, SlowLink) {
  const PreparedTrace t =
      Synth({.dp = 2, .pp = 4, .microbatches = 4, .steps = {0, 1, 2}},
            Scaled([](const sim::SynthOp& op) {
              const bool p2p = op.type == OpType::kForwardSend ||
                               op.type == OpType::kForwardRecv ||
                               op.type == OpType::kBackwardSend ||
                               op.type == OpType::kBackwardRecv;
              return p2p && op.dp == 1 && op.stage == 2 ? 8.0 : 1.0;
            }));
  ExpectExact(t);
}

TEST(UnfixEachWorkerTest, TwoEquallySlowRanksTie) {
  const PreparedTrace t =
      Synth({.dp = 4, .pp = 2, .microbatches = 4, .steps = {0, 1}},
            Scaled([](const sim::SynthOp& op) {
              return (op.dp == 0 || op.dp == 3) && op.stage == 1 ? 1.4 : 1.0;
            }));
  const Compared c = ExpectExact(t);
  // Leave-one-out blames neither alone less than the other: un-fixing
  // either brings back the same step (the other is ideal then).
  EXPECT_EQ(c.unfix.mean_step_s[IndexOf(t, 0, 1)],
            c.unfix.mean_step_s[IndexOf(t, 3, 1)]);
  EXPECT_GT(c.unfix.mean_step_s[IndexOf(t, 0, 1)], c.t_ideal);
}

TEST(UnfixEachWorkerTest, CostsBelowTheIdeal) {
  // Every op jittered +-30 %, and one worker 40 % faster than the rest.
  // Its decreases die at the DP collectives, where the other (ideal)
  // replicas are tight too: un-fixing it alone cannot shorten the step.
  const PreparedTrace t =
      Synth({.dp = 3, .pp = 3, .microbatches = 6, .steps = {0, 1, 2, 3}},
            Scaled([](const sim::SynthOp& op) {
              const double fast = op.dp == 1 && op.stage == 0 ? 0.6 : 1.0;
              return fast * Jitter(op, 0.7, 1.3);
            }));
  const Compared c = ExpectExact(t);
  EXPECT_LE(c.unfix.mean_step_s[IndexOf(t, 1, 0)], c.t_ideal);
}

TEST(UnfixEachWorkerTest, AFastStageAloneShortensThePipeline) {
  // One replica: nothing else is tight where the fast stage's ops end, so
  // its decreases reach the end of the step.
  const PreparedTrace t =
      Synth({.dp = 1, .pp = 2, .microbatches = 4, .steps = {0, 1}},
            Scaled([](const sim::SynthOp& op) {
              return op.stage == 0 && trace::IsCompute(op.type) ? 0.6 : 1.0;
            }));
  const Compared c = ExpectExact(t);
  EXPECT_LT(c.unfix.mean_step_s[IndexOf(t, 0, 0)], c.t_ideal);
  EXPECT_GT(c.unfix.mean_step_s[IndexOf(t, 0, 1)], c.t_ideal);
}

TEST(UnfixEachWorkerTest, InterleavedSchedule) {
  const PreparedTrace t = Synth(
      {.dp = 2, .pp = 2, .vpp = 2, .microbatches = 4, .steps = {0, 1}},
      Scaled([](const sim::SynthOp& op) { return Jitter(op, 0.8, 1.25); }));
  ExpectExact(t);
}

TEST(UnfixEachWorkerTest, OneReplica) {
  const PreparedTrace t =
      Synth({.dp = 1, .pp = 3, .microbatches = 4, .steps = {0, 1}},
            Scaled([](const sim::SynthOp& op) { return Jitter(op, 0.5, 2); }));
  ExpectExact(t);
}

constexpr std::string_view kSimSpec = R"(
job: {dp: 4, pp: 4, tp: 2, microbatches: 8, steps: 5, gpus_per_node: 4}
compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.05}}
sequences: {dist: lognormal, median: 2048, sigma: 0.4, max: 16384,
            per_microbatch: 2, quadratic: 0.0002}
comm: {p2p_ms: 0.5, dp_allgather_ms: 3, dp_reducescatter_ms: 4,
       noise: {dist: lognormal, sigma: 0.05}}
stragglers:
  - {kind: slow_worker, rank: 5, factor: 1.5}
  - {kind: slow_link, node: 2, factor: 3.0}
  - {kind: gc_pause, ranks: all, rate_per_step: 0.05, pause_ms: 30}
)";

sim::SimulatedJob Simulated(std::string_view yaml) {
  auto spec = sim::ParseJobSpec(yaml, "test.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  auto job = sim::Simulate(*spec, {.truth = false});
  EXPECT_TRUE(job.ok()) << job.status().message();
  return std::move(job).value();
}

TEST(UnfixEachWorkerTest, SimulatedJobWithInjectedStragglers) {
  const sim::SimulatedJob job = Simulated(kSimSpec);
  const trace::OpsTable table = sim::ToOpsTable(job, 0, job.spec.job.steps - 1);
  auto t = PrepareTrace(table, sim::MetaOf(job));
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Compared c = ExpectExact(*t);
  EXPECT_EQ(c.workers, 16u);
  // Threads do not change anything.
  const UnfixCosts costs =
      DeriveUnfixCosts(*t, Analyze(*t, {})->ideal_node_cost);
  auto one = UnfixEachWorker(*t, costs.traced, costs.ideal, {.threads = 1});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->step_s, c.unfix.step_s);
}

// Layout::kRanks: the simulated job exported as Kineto traces and read
// back through the generic model (one instance per step, stage = rank).
TEST(UnfixEachWorkerTest, ProfilerTraceLayout) {
  const sim::SimulatedJob job = Simulated(R"(
job: {dp: 2, pp: 2, microbatches: 4, steps: 4}
compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.1}}
comm: {p2p_ms: 0.5, dp_allgather_ms: 2, dp_reducescatter_ms: 3}
stragglers:
  - {kind: slow_worker, rank: 1, factor: 1.4}
)");
  const trace::OpsTable table = sim::ToOpsTable(job, 0, job.spec.job.steps - 1);
  const trace::JobMeta meta = sim::MetaOf(job);
  auto exported = ingest::KinetoExport::Build(table, meta, {});
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  std::vector<trace::RankTrace> ranks;
  for (size_t r = 0; r < exported->workers().size(); ++r) {
    std::string json;
    exported->Render(static_cast<int32_t>(r), &json);
    auto parsed = ingest::ParseKinetoTrace(json, "rank" + std::to_string(r));
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    ranks.push_back(std::move(parsed).value());
  }
  auto model = graph::BuildGenericModel(ranks);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto t = PrepareGenericTrace(std::move(model).value());
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->layout, Layout::kRanks);
  const Compared c = ExpectExact(*t);
  EXPECT_EQ(c.workers, 4u);
}

// With the decompositions' inputs (traced durations, T_opt), a worker of a
// job with one stage is its DP rank, and of a job with one replica its
// stage: UnfixEachWorker must give S_dp and S_pp bit for bit.
void ExpectDecomposition(const PreparedTrace& t) {
  WhatIfOptions plain;
  plain.threads = 1;
  auto r = Analyze(t, plain);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const UnfixCosts costs = DeriveUnfixCosts(t, r->ideal_node_cost);
  auto u = UnfixEachWorker(t, t.cost, costs.ideal);
  ASSERT_TRUE(u.ok()) << u.status().message();
  ScenarioRunner runner(t);
  runner.SetCosts(t.cost, r->ideal_node_cost);
  const double ideal_opt = runner.RunIdealLane().opt[0];
  const double mean_ideal_opt =
      PairwiseMean(std::vector<double>(t.steps.size(), ideal_opt));
  for (size_t k = 0; k < t.workers.size(); ++k) {
    const Worker& w = t.workers[k];
    const Decomposition& d = t.pp == 1 ? r->by_dp_rank : r->by_stage;
    const size_t key = static_cast<size_t>(t.pp == 1 ? w.dp : w.pp);
    EXPECT_EQ(u->mean_opt_s[k] / mean_ideal_opt, d.slowdown[key])
        << "rank " << w.rank;
  }
}

TEST(UnfixEachWorkerTest, OneStageOrOneReplicaGivesTheDecompositions) {
  ExpectDecomposition(Synth(
      {.dp = 4, .pp = 1, .microbatches = 3, .steps = {0, 1, 2}},
      Scaled([](const sim::SynthOp& op) { return Jitter(op, 0.6, 1.6); })));
  ExpectDecomposition(Synth(
      {.dp = 1, .pp = 4, .microbatches = 6, .steps = {0, 1, 2}},
      Scaled([](const sim::SynthOp& op) { return Jitter(op, 0.6, 1.6); })));
}

TEST(UnfixEachWorkerTest, MismatchedCostsAreAnError) {
  const PreparedTrace t = Synth({.dp = 2, .pp = 2, .microbatches = 2},
                                Scaled([](auto&) { return 1.0; }));
  const std::vector<double> few(3, 0.0);
  const auto r = UnfixEachWorker(t, few, few);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
}

// The published traces (whatif-spec.md): every worker of AR, ST and SE.
TEST(UnfixEachWorkerTest, PublishedTraces) {
  if (!HavePublishedTraces()) {
    GTEST_SKIP() << "published traces not found at " << PublishedTracesDir()
                 << ": nothing compared";
  }
  for (const char* name : {"AR", "ST", "SE"}) {
    SCOPED_TRACE(name);
    trace::OpsTable table;
    trace::JobMeta meta;
    const Status read = ReadPublishedTrace(name, &table, &meta);
    ASSERT_TRUE(read.ok()) << read.message();
    auto t = PrepareTrace(table, meta);
    ASSERT_TRUE(t.ok()) << t.status().message();
    const Compared c = ExpectExact(*t);
    EXPECT_EQ(c.workers, t->workers.size());
    std::printf(
        "trace-%s: %zu workers x %zu steps exact; changed ops %.1f%% "
        "of replayed\n",
        name, c.workers, t->steps.size(),
        100.0 * static_cast<double>(c.unfix.changed_ops) /
            static_cast<double>(c.unfix.replayed_ops));
  }
}

}  // namespace
}  // namespace strag::whatif
