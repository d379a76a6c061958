// SPDX-License-Identifier: Apache-2.0
// Every worker's exact un-fix step time next to today's whole Analyze, on
// the same prepared trace of a simulated 16k-GPU job (preset llama-16k:
// DP 128 x PP 16 x TP 8, 32 microbatches, 20 steps; 2,048 traced workers).
// Acceptance of issue 15: UnfixEachWorker under 2x Analyze, same threads.
//
// usage: whatif_worker_attribution_benchmark [--benchmark_filter=...]
// Env STRAG_BENCH_PRESET=NAME picks another simulator preset.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "report/inputs.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "whatif/analysis.h"
#include "whatif/scenario_runner.h"
#include "whatif/selection.h"
#include "whatif/worker_attribution.h"

namespace strag::whatif {
namespace {

struct Job {
  PreparedTrace trace;
  std::vector<double> ideal_node_cost;  // WhatIfResult::ideal_node_cost
  UnfixCosts costs;  // what Analyze hands its counterfactuals
};

// Simulated once (seconds) and shared by every benchmark.
const Job& TheJob() {
  static const std::unique_ptr<Job> job = [] {
    const char* env = std::getenv("STRAG_BENCH_PRESET");
    const std::string preset = env ? env : "llama-16k";
    auto spec = sim::PresetSpec(preset);
    if (!spec.ok()) std::abort();
    auto simulated =
        sim::Simulate(*spec, {.truth = false, .keep_times = false});
    if (!simulated.ok()) std::abort();
    auto out = std::make_unique<Job>();
    out->trace = std::move(report::SimulatedInput(&*simulated).prepared);
    auto r = Analyze(out->trace, {});
    if (!r.ok()) std::abort();
    out->ideal_node_cost = r->ideal_node_cost;
    out->costs = DeriveUnfixCosts(out->trace, out->ideal_node_cost);
    std::fprintf(
        stderr, "%s: %zu workers, %zu nodes x %zu instances, %zu steps\n",
        preset.c_str(), out->trace.workers.size(), out->trace.num_nodes(),
        out->trace.num_instances(), out->trace.steps.size());
    return out;
  }();
  return *job;
}

// Today's analysis (S, decompositions, M_W, M_S), state.range(0) threads.
void BM_Analyze(benchmark::State& state) {
  const Job& job = TheJob();
  WhatIfOptions options;
  options.threads = static_cast<size_t>(state.range(0));
  uint64_t replayed = 0;
  for (auto _ : state) {
    auto r = Analyze(job.trace, options);
    benchmark::DoNotOptimize(r);
    replayed = r->replayed_ops;
  }
  state.counters["replayed_ops"] = static_cast<double>(replayed);
}
BENCHMARK(BM_Analyze)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// Every worker's exact un-fix, given the costs Analyze already has.
void BM_UnfixEachWorker(benchmark::State& state) {
  const Job& job = TheJob();
  UnfixEachWorkerOptions options;
  options.threads = static_cast<size_t>(state.range(0));
  uint64_t replayed = 0;
  for (auto _ : state) {
    auto r =
        UnfixEachWorker(job.trace, job.costs.traced, job.costs.ideal, options);
    benchmark::DoNotOptimize(r);
    replayed = r->replayed_ops;
  }
  state.counters["workers"] = static_cast<double>(job.trace.workers.size());
  state.counters["replayed_ops"] = static_cast<double>(replayed);
}
BENCHMARK(BM_UnfixEachWorker)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// Standalone (without the analysis' arrays): DeriveUnfixCosts included.
void BM_UnfixEachWorkerStandalone(benchmark::State& state) {
  const Job& job = TheJob();
  UnfixEachWorkerOptions options;
  options.threads = 1;
  for (auto _ : state) {
    const UnfixCosts costs = DeriveUnfixCosts(job.trace, job.ideal_node_cost);
    auto r = UnfixEachWorker(job.trace, costs.traced, costs.ideal, options);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_UnfixEachWorkerStandalone)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The brute force it replaces: one ScenarioRunner un-fix per worker.
void BM_BruteForcePerWorker(benchmark::State& state) {
  const Job& job = TheJob();
  ScenarioRunner runner(job.trace);
  runner.SetCosts(job.costs.traced, job.costs.ideal);
  for (auto _ : state) {
    for (const Worker& w : job.trace.workers) {
      auto times = runner.Run(Base::kIdeal, SelectWorkers(job.trace, {w}));
      benchmark::DoNotOptimize(times);
    }
  }
}
BENCHMARK(BM_BruteForcePerWorker)->Unit(benchmark::kMillisecond)->Iterations(1);

// How much of the replayed work differs from the ideal step at all: the
// (op, lane) times a sparse propagation (wait-states §4.5) would carry.
void BM_ConeSize(benchmark::State& state) {
  const Job& job = TheJob();
  uint64_t changed = 0, replayed = 0;
  for (auto _ : state) {
    auto r = UnfixEachWorker(job.trace, job.costs.traced, job.costs.ideal,
                             {.threads = 1, .measure_cone = true});
    changed = r->changed_ops;
    replayed = r->replayed_ops;
  }
  state.counters["changed_ops"] = static_cast<double>(changed);
  state.counters["changed_share"] =
      static_cast<double>(changed) / static_cast<double>(replayed);
}
BENCHMARK(BM_ConeSize)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace strag::whatif

BENCHMARK_MAIN();
