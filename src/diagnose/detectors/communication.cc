// SPDX-License-Identifier: Apache-2.0
// communication: communication op types dominate the slowdown while compute is
// balanced.
#include <algorithm>
#include <string>
#include <vector>

#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

namespace {

// The excess of op group g that persists: the median over the steps of its
// per-step excess (a slow link slows every step; two spikes of a loopback
// all-reduce in ten steps are noise), unless its mean is a real loss by
// itself (kTransientLoss of the ideal step).
double PersistentExcess(const whatif::Decomposition& d, size_t g) {
  constexpr double kTransientLoss = 0.15;
  const double mean = d.slowdown[g] - 1;
  if (g >= d.per_step.size() || d.per_step[g].size() < 3 ||
      mean >= kTransientLoss) {
    return mean;
  }
  std::vector<double> v = d.per_step[g];
  return std::min(mean, Median(&v) - 1);
}

}  // namespace

Finding DetectCommunication(const whatif::WhatIfResult& r) {
  Finding f{Cause::kCommunication, 0, {}, ""};
  double comm = 0, compute = 0;
  std::string worst;
  for (size_t g = 0; g < r.by_optype.keys.size(); ++g) {
    const double excess = IsCommGroup(r.by_optype.keys[g])
                              ? PersistentExcess(r.by_optype, g)
                              : r.by_optype.slowdown[g] - 1;
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
      Format(" (S_t - 1 = %.3f in the median step) against %.3f for the "
             "slowest compute type",
             comm, compute);
  return f;
}

}  // namespace strag::diagnose
