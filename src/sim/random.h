// SPDX-License-Identifier: Apache-2.0
// Counter-based random numbers for the simulator.
//
// Every draw is a pure function of (seed, key...), not of a generator's
// position: the same spec and seed give the same job whatever the order of
// evaluation, and a job re-simulated with one injection removed draws the
// same noise everywhere else (which is how the ground truth isolates it).

#ifndef STRAG_SRC_SIM_RANDOM_H_
#define STRAG_SRC_SIM_RANDOM_H_

#include <cmath>
#include <cstdint>

namespace strag::sim {

// SplitMix64 finaliser: a bijective 64-bit mix.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A draw identified by `seed`, a stream id (what is drawn) and three keys.
struct DrawKey {
  uint64_t seed;
  uint64_t stream;
  uint64_t a = 0, b = 0, c = 0;
  uint64_t Hash() const {
    uint64_t h = Mix64(seed ^ Mix64(stream));
    h = Mix64(h ^ a);
    h = Mix64(h ^ (b * 0x9e3779b97f4a7c15ULL));
    return Mix64(h ^ (c * 0xc2b2ae3d27d4eb4fULL));
  }
};

// Uniform in (0, 1).
inline double Uniform(const DrawKey& key) {
  return (static_cast<double>(key.Hash() >> 11) + 0.5) / 9007199254740992.0;
}

// Standard normal: the inverse normal CDF of one uniform (Acklam's rational
// approximation, relative error below 1.2e-9). Cheaper than Box-Muller: no
// trigonometry, and a logarithm only in the 5% tails.
inline double StandardNormal(const DrawKey& key) {
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                          -2.759285104469687e+02, 1.383577518672690e+02,
                          -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                          -1.556989798598866e+02, 6.680131188771972e+01,
                          -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                          -2.400758277161838e+00, -2.549732539343734e+00,
                          4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                          2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  const double p = Uniform(key);
  auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q +
            c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  };
  if (p < kLow) return tail(std::sqrt(-2.0 * std::log(p)));
  if (p > 1.0 - kLow) return -tail(std::sqrt(-2.0 * std::log(1.0 - p)));
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
         q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_RANDOM_H_
