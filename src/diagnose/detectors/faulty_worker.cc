// SPDX-License-Identifier: Apache-2.0
// faulty_worker: a few workers explain most of the slowdown, outliers against
// their peers.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

Finding DetectFaultyWorker(const whatif::WhatIfResult& r) {
  Finding f{Cause::kFaultyWorker, 0, r.fix_worst_workers.ranks, ""};
  const double m = r.fix_worst_workers.rem;
  f.confidence = m > 0.5 ? Clamp01(m) : Clamp01(m) * 0.5;
  if (r.workers.empty()) return f;
  // An outlier against the job's own noise: the worst worker's excess is
  // several times the median of the others', and it is the slowest in most
  // steps (a transient spike on one rank is not a faulty worker).
  // The others' median: with two workers, the other one. In a pipeline the
  // others are the worker's DP peers (its stage's replicas: the same
  // program); with none, a slow worker cannot be told from a heavy stage.
  const trace::RankPlace* top_place = r.topology.Find(r.workers.front().rank);
  const bool by_stage = r.topology.pp > 1 && top_place != nullptr;
  std::vector<double> others;
  for (size_t k = 1; k < r.workers.size(); ++k) {
    const trace::RankPlace* p = r.topology.Find(r.workers[k].rank);
    if (by_stage && (p == nullptr || p->pp != top_place->pp)) continue;
    others.push_back(r.workers[k].score - 1);
  }
  const double top = r.workers.front().score - 1;
  const double ratio = top / std::max(Median(&others), kNoiseFloor);
  if (others.empty()) f.confidence *= 0.5;
  const double share = WorstWorkerShare(r, r.workers.front());
  f.step_share = share;
  // Out of the job's own noise: a margin over the others of kMinMargin
  // standard deviations of its step-to-step spread (full weight 2 more).
  constexpr double kMinMargin = 1.0;
  const double margin = MarginOverNoise(r, r.workers.front());
  f.confidence *= Clamp01((ratio - 1.5) / 1.5) *
                  (r.steps.size() < 2 ? 1.0 : Clamp01(share / 0.5)) *
                  (std::isfinite(margin)
                       ? Clamp01((margin - kMinMargin) / 2.0)
                       : 1.0);
  f.evidence =
      Format(
          "fixing only the worst %.0f worker(s) recovers M_W = %.2f of "
          "the slowdown (step %.4g s -> %.4g s)",
          static_cast<double>(f.ranks.size()), m, r.fix_worst_workers.t_ori,
          r.fix_worst_workers.t_rem) +
      Format(
          "; its excess is %.1fx the median of the others', and it is "
          "the slowest in %.0f%% of the steps",
          ratio, 100 * share) +
      (std::isfinite(margin)
           ? Format(", %.1f standard deviations of the step-to-step noise "
                    "ahead of the others",
                    margin)
           : std::string());
  return f;
}

}  // namespace strag::diagnose
