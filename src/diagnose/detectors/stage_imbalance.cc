// SPDX-License-Identifier: Apache-2.0
// stage_imbalance: a stage whose typical worker computes more than the others.
#include <algorithm>
#include <vector>

#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

Finding DetectStageImbalance(const TraceEvidence& t,
                             const whatif::WhatIfResult& r) {
  Finding f{Cause::kStageImbalance, 0, {}, ""};
  const int32_t pp = t.topology.pp;
  if (pp < 2) return f;
  const auto work = WorkerComputePerStep(t);
  const std::vector<int32_t> stage_of = StageOfWorkers(t);
  std::vector<std::vector<double>> columns(static_cast<size_t>(pp));
  for (size_t k = 0; k < work.size(); ++k) {
    columns[static_cast<size_t>(stage_of[k])].push_back(MeanOf(work[k]));
  }
  // Each stage's typical worker: its lower median (with two replicas the
  // faster: one slow replica is a faulty worker, not a heavy stage).
  std::vector<double> stage(static_cast<size_t>(pp));
  for (size_t s = 0; s < stage.size(); ++s) stage[s] = LowerMedian(&columns[s]);
  double mean = 0;
  for (double x : stage) mean += x / static_cast<double>(stage.size());
  const size_t heavy = static_cast<size_t>(
      std::max_element(stage.begin(), stage.end()) - stage.begin());
  const double ratio = mean > 0 ? stage[heavy] / mean : 1.0;
  const double ms = r.fix_last_stage.rem;
  // A last stage that is not heavier may still explain the slowdown (M_S)
  // in the published traces; for profiler traces it must be the heavy one.
  double conf = heavy + 1 == stage.size() &&
                        (r.layout == whatif::Layout::kMegatron || ratio >= 1.05)
                    ? Clamp01(ms)
                    : 0.0;
  const whatif::Decomposition& by_stage =
      r.layout == whatif::Layout::kMegatron ? r.by_stage : r.by_pipeline_stage;
  const double share =
      heavy < by_stage.slowdown.size()
          ? (by_stage.slowdown[heavy] - 1) / std::max(r.slowdown - 1, 1e-9)
          : 0.0;
  if (ratio >= 1.05)
    conf = std::max(conf, Clamp01((ratio - 1) / 0.2) * Clamp01(share));
  f.confidence = conf;
  for (size_t k = 0; k < t.workers.size(); ++k) {
    if (stage_of[k] == static_cast<int32_t>(heavy)) {
      f.ranks.push_back(t.workers[k].rank);
    }
  }
  // Persistence: the steps in which the heavy stage's typical worker
  // computes the most of all stages'.
  size_t heaviest = 0;
  for (size_t s = 0; s < t.steps.size(); ++s) {
    std::vector<std::vector<double>> per(static_cast<size_t>(pp));
    for (size_t k = 0; k < work.size(); ++k) {
      per[static_cast<size_t>(stage_of[k])].push_back(work[k][s]);
    }
    std::vector<double> typical;
    for (std::vector<double>& c : per) typical.push_back(LowerMedian(&c));
    heaviest +=
        static_cast<size_t>(std::max_element(typical.begin(), typical.end()) -
                            typical.begin()) == heavy;
  }
  f.step_share = t.steps.empty() ? -1
                                 : static_cast<double>(heaviest) /
                                       static_cast<double>(t.steps.size());
  f.evidence = Format(
      "stage %.0f computes %.0f%% more than the average stage "
      "(typical worker); fixing only the last stage recovers "
      "M_S = %.2f of the slowdown",
      static_cast<double>(heavy), 100 * (ratio - 1), ms);
  return f;
}

}  // namespace strag::diagnose
