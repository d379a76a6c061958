// SPDX-License-Identifier: Apache-2.0
// communication: communication op types dominate the slowdown while compute is
// balanced.
#include <algorithm>
#include <string>

#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

Finding DetectCommunication(const whatif::WhatIfResult& r) {
  Finding f{Cause::kCommunication, 0, {}, ""};
  double comm = 0, compute = 0;
  std::string worst;
  for (size_t g = 0; g < r.by_optype.keys.size(); ++g) {
    const double excess = r.by_optype.slowdown[g] - 1;
    if (IsCommGroup(r.by_optype.keys[g])) {
      if (excess > comm) comm = excess, worst = r.by_optype.keys[g];
    } else {
      compute = std::max(compute, excess);
    }
  }
  // A real excess: the worst communication type costs more than noise
  // (kCommNoise of the ideal step; full weight from 5% above it).
  constexpr double kCommNoise = 0.02;
  f.confidence = comm > kCommNoise
                     ? Clamp01(comm / (comm + compute)) *
                           Clamp01((comm - kCommNoise) / 0.05)
                     : 0;
  f.evidence =
      "the slowest communication type is " +
      (worst.empty() ? std::string("none") : worst) +
      Format(" (S_t - 1 = %.3f) against %.3f for the slowest compute type",
             comm, compute);
  return f;
}

}  // namespace strag::diagnose
