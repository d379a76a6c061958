// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/robust_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace strag::diagnose::online {

double MedianInPlace(std::span<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  const auto it = v.begin() + static_cast<ptrdiff_t>(mid);
  std::nth_element(v.begin(), it, v.end());
  const double hi = *it;
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), it);
  return lo + (hi - lo) / 2;
}

double LowerMedianInPlace(std::span<double> v) {
  if (v.empty()) return 0;
  const auto it = v.begin() + static_cast<ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), it, v.end());
  return *it;
}

double MadInPlace(std::span<double> v, double median) {
  for (double& x : v) x = std::abs(x - median);
  return MedianInPlace(v);
}

double RobustSigma(double mad_ns, double median_ns) {
  constexpr double kMinRelative = 0.005;
  constexpr double kMinNs = 50'000;
  return kMadToSigma *
         std::max({mad_ns, kMinRelative * std::abs(median_ns), kMinNs});
}

uint16_t ToBf16(float x) {
  if (std::isnan(x)) return 0x7fc0;
  const auto bits = std::bit_cast<uint32_t>(x);
  // Round to nearest, ties to even, on the 16 bits dropped.
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

float FromBf16(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

void PearsonSums::Add(double x, double y) {
  n += 1;
  sx += x;
  sy += y;
  sxx += x * x;
  syy += y * y;
  sxy += x * y;
}

double PearsonSums::R() const {
  if (n < 3) return 0;
  const double vx = sxx - sx * sx / n;
  const double vy = syy - sy * sy / n;
  const double cov = sxy - sx * sy / n;
  if (vx <= 1e-12 * sxx || vy <= 1e-12 * syy) return 0;
  return std::clamp(cov / std::sqrt(vx * vy), -1.0, 1.0);
}

}  // namespace strag::diagnose::online
