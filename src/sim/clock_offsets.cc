// SPDX-License-Identifier: Apache-2.0
#include "sim/clock_offsets.h"

#include <cmath>

#include "sim/random.h"

namespace strag::sim {

std::vector<int64_t> DrawClockOffsets(uint64_t seed, size_t ranks,
                                      double max_ms) {
  constexpr uint64_t kOffsetStream = 0x6b696e65746fULL;  // "kineto"
  const double max_ns = max_ms * 1e6;
  std::vector<int64_t> out(ranks, 0);
  for (size_t r = 0; r < ranks; ++r) {
    const double u = Uniform({seed, kOffsetStream, static_cast<uint64_t>(r)});
    out[r] = std::llround((2.0 * u - 1.0) * max_ns);
  }
  return out;
}

}  // namespace strag::sim
