// SPDX-License-Identifier: Apache-2.0
// CloseStep cost at scale: N ranks in one data-parallel group (the largest
// peer group, the worst case for the medians) with one slow rank, over a
// window already full of steps (steady state: every step evicts one).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "diagnose/online/online_detector.h"

namespace strag::diagnose::online {
namespace {

constexpr int kVariants = 8;  // distinct steps, replayed in turn

std::vector<std::vector<RankStep>> Steps(int32_t ranks) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 0.03);
  std::vector<std::vector<RankStep>> out(kVariants);
  for (auto& step : out) {
    for (int32_t r = 0; r < ranks; ++r) {
      RankStep x;
      x.rank = r;
      const double busy = 0.8e9 * std::exp(noise(rng)) * (r == 7 ? 1.2 : 1);
      x.step_ns = 1'000'000'000;
      x.fwd_ns = static_cast<int64_t>(busy / 3);
      x.bwd_ns = static_cast<int64_t>(busy * 2 / 3);
      x.coll_ns[0] = x.step_ns - x.fwd_ns - x.bwd_ns;
      step.push_back(x);
    }
  }
  return out;
}

void BM_CloseStep(benchmark::State& state) {
  const auto ranks = static_cast<int32_t>(state.range(0));
  const auto window = static_cast<int32_t>(state.range(1));
  std::vector<std::vector<RankStep>> steps = Steps(ranks);
  OnlineOptions o;
  o.window_steps = window;
  o.window_s = 1;  // W = window_steps (1 s steps)
  OnlineDetector det(o);
  int64_t k = 0;
  auto close = [&] {
    std::vector<RankStep>& s = steps[static_cast<size_t>(k % kVariants)];
    for (RankStep& x : s) x.t_end_ns = (k + 1) * 1'000'000'000;
    return det.CloseStep(k++, s);
  };
  for (int32_t i = 0; i < window + 2; ++i) close();  // fill the window
  for (auto _ : state) benchmark::DoNotOptimize(close());
  state.SetItemsProcessed(state.iterations() * ranks);
}
BENCHMARK(BM_CloseStep)
    ->Args({1024, 100})
    ->Args({100'000, 100})
    ->Args({100'000, 600})
    ->Unit(benchmark::kMillisecond);

void BM_View(benchmark::State& state) {
  const auto ranks = static_cast<int32_t>(state.range(0));
  std::vector<std::vector<RankStep>> steps = Steps(ranks);
  OnlineDetector det;
  for (int64_t k = 0; k < 120; ++k) {
    std::vector<RankStep>& s = steps[static_cast<size_t>(k % kVariants)];
    for (RankStep& x : s) x.t_end_ns = (k + 1) * 1'000'000'000;
    det.CloseStep(k, s);
  }
  for (auto _ : state) benchmark::DoNotOptimize(det.View());
}
BENCHMARK(BM_View)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strag::diagnose::online

BENCHMARK_MAIN();
