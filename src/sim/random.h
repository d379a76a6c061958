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

// Standard normal (Box-Muller on two independent uniforms of the key).
inline double StandardNormal(const DrawKey& key) {
  DrawKey second = key;
  second.stream ^= 0x5bd1e995ULL;
  const double u1 = Uniform(key), u2 = Uniform(second);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_RANDOM_H_
