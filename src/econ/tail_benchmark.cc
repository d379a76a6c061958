// SPDX-License-Identifier: Apache-2.0
// One `strag tail` evaluation (E[max], SD[max], E with backups) per
// distribution and N. The accuracy of the same routines against a 50-digit
// reference is in docs/performance.md.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "econ/tail.h"

namespace strag::econ {
namespace {

void Run(benchmark::State& state, const char* text) {
  const Distribution d = *ParseDistribution(text);
  const int64_t n = state.range(0);
  for (auto _ : state) {
    const TailSummary s = SummarizeTail(d, n);
    benchmark::DoNotOptimize(s.std_max_s);
    benchmark::DoNotOptimize(ExpectedWithBackups(d, n, 16));
  }
}

void BM_TailNormal(benchmark::State& s) { Run(s, "normal:100ms,5ms"); }
void BM_TailLognormal(benchmark::State& s) { Run(s, "lognormal:100ms,1"); }
void BM_TailExp(benchmark::State& s) { Run(s, "exp:100ms"); }
void BM_TailTwoPoint(benchmark::State& s) {
  Run(s, "twopoint:100ms,p=0.5,d=20ms");
}

// The median of 2N (--backups N): the narrowest density to integrate, and
// the binomial tail with the most terms.
void RunMedian(benchmark::State& state, const char* text) {
  const Distribution d = *ParseDistribution(text);
  const int64_t n = state.range(0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(ExpectedWithBackups(d, n, n));
  }
}
void BM_TailNormalMedian(benchmark::State& s) {
  RunMedian(s, "normal:100ms,5ms");
}
void BM_TailTwoPointMedian(benchmark::State& s) {
  RunMedian(s, "twopoint:100ms,p=0.5,d=20ms");
}

BENCHMARK(BM_TailNormal)->Arg(8)->Arg(1024)->Arg(1000000)->Arg(1000000000);
BENCHMARK(BM_TailLognormal)->Arg(8)->Arg(1024)->Arg(1000000)->Arg(1000000000);
BENCHMARK(BM_TailExp)->Arg(1024)->Arg(100000)->Arg(1000000000);
BENCHMARK(BM_TailTwoPoint)->Arg(1024)->Arg(1000000)->Arg(1000000000);
BENCHMARK(BM_TailNormalMedian)->Arg(1024)->Arg(1000000)->Arg(1000000000);
BENCHMARK(BM_TailTwoPointMedian)->Arg(1024)->Arg(1000000)->Arg(1000000000);

}  // namespace
}  // namespace strag::econ

BENCHMARK_MAIN();
