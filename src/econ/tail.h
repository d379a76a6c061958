// SPDX-License-Identifier: Apache-2.0
// Tail latency of a synchronous step: N iid workers, each with a step time
// drawn from one distribution, and a step that ends when the slowest ends.
//
// Closed forms and tables: shared/reference/whatif-method.md §5. Everything
// here is pure arithmetic in seconds; nothing prints or reads files.

#ifndef STRAG_SRC_ECON_TAIL_H_
#define STRAG_SRC_ECON_TAIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace strag::econ {

// One worker's step time. Which fields matter depends on `kind`; the
// others stay 0. Build it with ParseDistribution or fill it in directly
// (the calculators assume the values ParseDistribution would accept).
struct Distribution {
  enum class Kind { kNormal, kLognormal, kExponential, kTwoPoint, kFixed };
  Kind kind = Kind::kFixed;
  // kNormal, kExponential: the mean. kLognormal: the mean of X itself (not
  // the median), so E[X] is what the user typed. kFixed: the value.
  double mean_s = 0;
  double sigma_s = 0;    // kNormal: the standard deviation
  double log_sigma = 0;  // kLognormal: the standard deviation of ln X
  double base_s = 0;     // kTwoPoint: a worker that is not delayed
  double p = 0;          // kTwoPoint: probability that a worker is delayed
  double delay_s = 0;    // kTwoPoint: the delay D
};

// Parses one of
//   normal:MEAN,SD            e.g. normal:100ms,5ms
//   lognormal:MEAN,SIGMA      MEAN = E[X]; SIGMA = sd of ln X (no unit),
//                             e.g. lognormal:100ms,0.1
//   exp:MEAN                  exponential with that mean, e.g. exp:100ms
//   twopoint:[BASE,]p=P,d=D   BASE (default 0), plus D with probability P,
//                             e.g. twopoint:100ms,p=0.01,d=20ms
//   fixed:T                   every worker takes exactly T
// Durations need a unit: ns, us, ms or s. Errors (kInvalidInput) quote the
// text and say what was expected.
Result<Distribution> ParseDistribution(std::string_view text);

// A duration with its unit (ns, us, ms or s), e.g. "20ms", in seconds.
Result<double> ParseDuration(std::string_view text);

// A short, canonical description, e.g. "normal(mean 100 ms, sd 5 ms)".
std::string DescribeDistribution(const Distribution& d);

// A duration in the largest unit (s, ms, us, ns) that keeps it >= 1, with 6
// significant digits: 0.11624 -> "116.24 ms".
std::string FormatDuration(double seconds);

// E[X] and SD[X] of one worker, in seconds.
double Mean(const Distribution& d);
double StdDev(const Distribution& d);

// P(X > threshold_s) for one worker.
double ProbabilityAbove(const Distribution& d, double threshold_s);

// E[max of n iid draws] and its standard deviation, in seconds; n >= 1.
// Normal and lognormal integrate the density of the maximum numerically
// (Boost.Math Gauss-Kronrod; ~1e-15 relative for the mean, ~1e-9 for the SD
// of a median of 1e9, in well under a millisecond); the others are closed
// forms.
double ExpectedMax(const Distribution& d, int64_t n);
double StdMax(const Distribution& d, int64_t n);

// E[X_(k:n)], the k-th smallest of n iid draws (1 <= k <= n), in seconds.
double ExpectedOrderStatistic(const Distribution& d, int64_t k, int64_t n);

// Expected step with `backups` extra workers, where the step needs only the
// first n of the n + backups workers to finish: E[X_(n : n+backups)]. For
// the exponential this is mean * (H_{n+b} - H_b).
double ExpectedWithBackups(const Distribution& d, int64_t n, int64_t backups);

// 1 - (1 - p)^n: the chance that at least one of n workers is slow when each
// is slow with probability p (fan-out amplification, "The Tail at Scale").
double ProbabilityAnySlow(double p, int64_t n);

// H_n = 1 + 1/2 + ... + 1/n (H_0 = 0), as digamma(n + 1) + Euler's gamma
// (Boost.Math): ~1e-16 relative, O(1).
double HarmonicNumber(int64_t n);

// e_N and SD/sigma of the maximum of n standard normals (the §5.2 table).
double NormalMaxFactor(int64_t n);
double NormalMaxSdFactor(int64_t n);

// What the tail costs a job of n workers, all in seconds per step.
struct TailSummary {
  int64_t workers = 0;
  double mean_s = 0;          // E[X]: a worker's own step time
  double expected_max_s = 0;  // E[max]: the synchronous step
  double std_max_s = 0;       // SD of the synchronous step
  // E[X] / E[max]: the share of each step a typical worker is busy (0 when
  // E[max] is 0).
  double utilization = 0;
  // n * (E[max] - E[X]): GPU time spent waiting for the slowest worker.
  double lost_gpu_seconds_per_step = 0;
  // Per worker P(slow) and P(at least one of n slow), when "slow" is defined:
  // the delay of a two-point distribution, or X > slow_above_s when given.
  std::optional<double> p_slow;
  std::optional<double> p_any_slow;
};

TailSummary SummarizeTail(const Distribution& d, int64_t n,
                          std::optional<double> slow_above_s = std::nullopt);

}  // namespace strag::econ

#endif  // STRAG_SRC_ECON_TAIL_H_
