// SPDX-License-Identifier: Apache-2.0
// sequence_length_imbalance: input-dependent compute (forward/backward
// correlation, or a moving compute straggler).
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

namespace {

// Without forward/backward op types (profiler traces): compute that varies
// from step to step far beyond noise, with the slowest rank of a stage
// moving between steps, is input-dependent work (sequence lengths).
Finding DetectMovingCompute(const TraceEvidence& t,
                            const whatif::WhatIfResult& r) {
  Finding f{Cause::kSequenceLengthImbalance, 0, {}, ""};
  const auto work = WorkerComputePerStep(t);
  const std::vector<int32_t> stage_of = StageOfWorkers(t);
  const size_t steps = t.steps.size();
  if (steps < 3 || work.size() < 2) return f;
  double spread = 0;  // mean over steps of the largest excess over median
  std::map<size_t, size_t> worst_count;
  for (size_t s = 0; s < steps; ++s) {
    std::map<int32_t, std::vector<double>> by_stage;
    for (size_t k = 0; k < work.size(); ++k) {
      by_stage[stage_of[k]].push_back(work[k][s]);
    }
    std::map<int32_t, double> median;
    for (auto& [stage, v] : by_stage) median[stage] = Median(&v);
    double top = 0;
    size_t worst = 0;
    for (size_t k = 0; k < work.size(); ++k) {
      const double m = median[stage_of[k]];
      const double excess = m > 0 ? work[k][s] / m - 1 : 0;
      if (excess > top) top = excess, worst = k;
    }
    spread += top / static_cast<double>(steps);
    ++worst_count[worst];
  }
  size_t top = 0, top_worker = 0;
  for (auto [k, c] : worst_count) {
    if (c > top) top = c, top_worker = k;
  }
  const double moves =
      1.0 - static_cast<double>(top) / static_cast<double>(steps);
  // Without token counts the evidence is indirect: at most 0.7.
  f.confidence = 0.7 * Clamp01((spread - 0.10) / 0.20) * Clamp01(moves / 0.5) *
                 Clamp01((r.slowdown - 1) / 0.05);
  f.ranks.push_back(t.workers[top_worker].rank);
  f.step_share = static_cast<double>(top) / static_cast<double>(steps);
  f.evidence = Format(
      "the slowest rank of a stage computes %.0f%% more than the stage's "
      "median rank on average per step, and a different rank is the slowest "
      "in %.0f%% of the steps: input-dependent work (sequence lengths; the "
      "traces carry no token counts, so this is inferred from timing alone)",
      100 * spread, 100 * moves);
  return f;
}

// With recorded shapes (record_shapes): the input size of every worker and
// step. Sequence-length imbalance is compute that follows the input: input
// size and compute time correlate across (worker, step), and the ranks of a
// stage hold different amounts of input. The straggler named is the worker
// that holds the most input of its stage in the most steps (then the most
// input in all); its share of steps is the finding's persistence.
Finding DetectFromInputSize(const TraceEvidence& t,
                            const whatif::WhatIfResult& r) {
  Finding f{Cause::kSequenceLengthImbalance, 0, {}, ""};
  const auto work = WorkerComputePerStep(t);
  const std::vector<int32_t> stage_of = StageOfWorkers(t);
  const size_t steps = t.steps.size();
  auto size_of = [&](size_t k, size_t s) {
    return static_cast<double>(t.input_size[k * steps + s]);
  };
  std::vector<double> x, y;
  std::vector<size_t> wins(work.size(), 0);
  std::vector<double> total(work.size(), 0);
  double spread = 0;  // mean over steps of the largest input over its median
  for (size_t s = 0; s < steps; ++s) {
    std::map<int32_t, std::vector<double>> by_stage;
    for (size_t k = 0; k < work.size(); ++k) {
      by_stage[stage_of[k]].push_back(size_of(k, s));
      x.push_back(size_of(k, s));
      y.push_back(work[k][s]);
      total[k] += size_of(k, s);
    }
    double top = 0;
    for (auto& [stage, v] : by_stage) {
      const double most = *std::max_element(v.begin(), v.end());
      const double median = Median(&v);
      if (median > 0) top = std::max(top, most / median - 1);
      for (size_t k = 0; k < work.size(); ++k) {
        if (stage_of[k] == stage && size_of(k, s) == most) ++wins[k];
      }
    }
    spread += top / static_cast<double>(steps);
  }
  size_t named = 0;
  for (size_t k = 1; k < work.size(); ++k) {
    if (wins[k] > wins[named] ||
        (wins[k] == wins[named] && total[k] > total[named])) {
      named = k;
    }
  }
  const double corr = Pearson(x, y);
  f.confidence = Clamp01((corr - 0.5) / 0.3) *
                 Clamp01((spread - 0.05) / 0.15) *
                 Clamp01((r.slowdown - 1) / 0.05);
  f.ranks.push_back(t.workers[named].rank);
  f.step_share = static_cast<double>(wins[named]) / static_cast<double>(steps);
  f.evidence = Format(
      "compute time follows the recorded input size (Pearson r = %.2f over "
      "ranks and steps); the largest input of a stage is %.0f%% over the "
      "stage's median on average per step, and the rank named holds the "
      "largest in %.0f%% of the steps",
      corr, 100 * spread, 100 * f.step_share);
  f.evidence += " (input size: " + t.input_size_source + ")";
  return f;
}

}  // namespace

Finding DetectSequenceLengthImbalance(const TraceEvidence& t,
                                      const whatif::WhatIfResult& r) {
  if (t.layout == whatif::Layout::kRanks) {
    const bool sized = t.steps.size() >= 2 && t.workers.size() >= 2 &&
                       t.input_size.size() == t.workers.size() * t.steps.size();
    return sized ? DetectFromInputSize(t, r) : DetectMovingCompute(t, r);
  }
  Finding f{Cause::kSequenceLengthImbalance, 0, {}, ""};
  // Per stage, the (forward, backward) times of each microbatch, centred
  // per instance, correlated over the instances (sums pooled over steps in
  // step order).
  double best_r = 0;
  int32_t best_stage = 0;
  const auto pp = static_cast<size_t>(t.pp);
  for (size_t s = 0; s < pp; ++s) {
    if (!t.stage_has_pairs[s]) continue;
    PairSums sum;
    for (size_t step = 0; step < t.steps.size(); ++step) {
      const PairSums& p = t.pairs[step * pp + s];
      sum.n += p.n, sum.x += p.x, sum.y += p.y;
      sum.xy += p.xy, sum.xx += p.xx, sum.yy += p.yy;
    }
    const double rs = PearsonOfSums(sum);
    if (rs > best_r) best_r = rs, best_stage = static_cast<int32_t>(s);
  }
  // Does the slowest DP replica change from step to step?
  const std::vector<size_t> worst = WorstDpPerStep(r);
  std::map<size_t, size_t> count;
  for (size_t d : worst) ++count[d];
  size_t top = 0;
  for (auto [d, c] : count) top = std::max(top, c);
  const double moves =
      worst.empty()
          ? 0
          : 1.0 - static_cast<double>(top) / static_cast<double>(worst.size());
  f.confidence =
      Clamp01((best_r - 0.8) / 0.2) * (0.3 + 0.7 * Clamp01(moves / 0.5));
  f.evidence = Format(
      "forward and backward times of a microbatch correlate "
      "(Pearson r = %.3f on stage %.0f, within each worker's "
      "step) and the slowest DP replica changes in %.0f%% of "
      "the steps",
      best_r, static_cast<double>(best_stage), 100 * moves);
  return f;
}

}  // namespace strag::diagnose
