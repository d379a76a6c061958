// SPDX-License-Identifier: Apache-2.0
// Simulated clock offsets: the per-rank clock skew that a simulated job's
// profiler traces are written with (`strag simulate --format kineto
// --clock-offset-ms X`), the ground truth of the clock aligner. Drawn here
// (randomness stays in sim/), passed to the Kineto writer.

#ifndef STRAG_SRC_SIM_CLOCK_OFFSETS_H_
#define STRAG_SRC_SIM_CLOCK_OFFSETS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strag::sim {

// One offset per rank 0..ranks-1, uniform in [-max_ms, +max_ms] and
// rounded to whole ns, a pure function of (seed, rank); all 0 for max 0.
std::vector<int64_t> DrawClockOffsets(uint64_t seed, size_t ranks,
                                      double max_ms);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_CLOCK_OFFSETS_H_
