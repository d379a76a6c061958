// SPDX-License-Identifier: Apache-2.0
// none: S and the launch slowdown under 1.05, a healthy job.
#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

Finding DetectHealthy(const whatif::WhatIfResult& r) {
  Finding f{Cause::kNone, 0, {}, ""};
  if (r.slowdown < 1.05 && r.launch_slowdown < 1.05) {
    f.confidence = 1.0;
  }
  f.evidence = Format(
      "S = %.3f and launch slowdown %.3f: residual noise costs %.1f%% "
      "of the GPU time",
      r.slowdown, r.launch_slowdown,
      100 * (1 - 1 / (r.slowdown * r.launch_slowdown)));
  return f;
}

}  // namespace strag::diagnose
