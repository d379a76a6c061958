// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/cusum.h"

#include <algorithm>
#include <cmath>

#include "diagnose/online/robust_stats.h"

namespace strag::diagnose::online {
namespace {

constexpr double kClipZ = 4;
constexpr double kMinSigma = 0.01;  // log units: 1% of the step
constexpr size_t kMinRun = 20;
constexpr double kMinShift = 0.03;  // log units
constexpr double kShiftSigmas = 2;
// A run longer than this without an alarm is a slow drift inside the
// noise; its memory is bounded.
constexpr size_t kMaxRun = 4096;

// The spread of the upper half: 1.4826 x the median of x - mu over the
// values above mu. Step times are right-skewed (the max over ranks), and a
// one-sided chart lives in that tail: the plain MAD would understate it.
double UpperSigma(std::vector<double>* v, double mu) {
  size_t n = 0;
  for (double x : *v) {
    if (x > mu) (*v)[n++] = x - mu;
  }
  v->resize(n);
  return kMadToSigma * MedianInPlace(*v);
}

}  // namespace

RegimeCusum::RegimeCusum(int32_t baseline_steps, double k, double h)
    : baseline_steps_(std::max(baseline_steps, 10)), k_(k), h_(h) {}

void RegimeCusum::Restart() {
  s_ = 0;
  run_start_ = -1;
  run_.clear();
}

std::optional<RegimeChange> RegimeCusum::Add(int64_t step, double step_ns) {
  if (!(step_ns > 0)) return std::nullopt;
  const double x = std::log(step_ns);
  if (!frozen_) {
    baseline_.push_back(x);
    if (baseline_.size() < static_cast<size_t>(baseline_steps_)) {
      return std::nullopt;
    }
    mu_ = MedianInPlace(baseline_);
    const auto p90 =
        baseline_.begin() +
        static_cast<ptrdiff_t>(0.9 * static_cast<double>(baseline_.size() - 1));
    std::nth_element(baseline_.begin(), p90, baseline_.end());
    p90_ = *p90;
    sigma_ = std::max(UpperSigma(&baseline_, mu_), kMinSigma);
    baseline_.clear();
    frozen_ = true;
    return std::nullopt;
  }
  const double z = std::clamp((x - mu_) / sigma_, -kClipZ, kClipZ);
  s_ = std::max(0.0, s_ + z - k_);
  if (s_ == 0) {
    Restart();
    return std::nullopt;
  }
  if (run_start_ < 0) run_start_ = step;
  run_.push_back(x);
  if (run_.size() > kMaxRun) Restart();
  if (s_ <= h_ || run_.size() < kMinRun) return std::nullopt;
  const int64_t since = run_start_;
  const double after = MedianInPlace(run_);
  Restart();
  if (after <
      std::max(mu_ + std::max(kMinShift, kShiftSigmas * sigma_), p90_)) {
    return std::nullopt;  // a noise excursion: the baseline stays
  }
  frozen_ = false;  // the new regime becomes the baseline
  return RegimeChange{since, std::exp(mu_), std::exp(after)};
}

}  // namespace strag::diagnose::online
