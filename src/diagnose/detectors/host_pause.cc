// SPDX-License-Identifier: Apache-2.0
// host_pause: launch delays (untraced host time: GC, Python) that are a real
// share of the step.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

Finding DetectHostPause(const TraceEvidence& t, const whatif::WhatIfResult& r) {
  Finding f{Cause::kHostPause, 0, {}, ""};
  // A pause: a launch delay of at least 5 ms before an op (less the host
  // time the trace names as data loading, which is data loading's); they
  // matter from 5% of the step time on the rank with the most.
  constexpr double kPauseShare = 0.05;
  constexpr double kJobShare = 0.15;
  const size_t steps = t.steps.size(), num_w = t.cells();
  // Pooled over steps in step order from the evidence's per-step sums.
  size_t pauses = 0;
  double total = 0, longest = 0;
  double named_loading = 0;  // launch delay that named data loading explains
  for (size_t step = 0; step < steps; ++step) {
    pauses += t.pauses[step];
    total += t.pause_total[step];
    longest = std::max(longest, static_cast<double>(t.longest_pause[step]));
    named_loading += t.named_loading[step];
  }
  // Total pause of each worker (w = dp rank * pp + stage, as worker_rank),
  // and its pause in each step ([w * steps + step]).
  std::vector<double> per_worker(num_w, 0.0);
  std::vector<double> per_cell(num_w * steps, 0.0);
  for (size_t step = 0; step < steps; ++step) {
    for (size_t w = 0; w < num_w; ++w) {
      const double x = t.pause[step * num_w + w];
      per_worker[w] += x;
      per_cell[w * steps + step] = x;
    }
  }
  const bool ranks = t.layout == whatif::Layout::kRanks;
  // The workers with pauses in rank order (every pause is at least 5 ms,
  // so a worker or step with a positive sum had one).
  std::vector<std::pair<int32_t, size_t>> paused;  // (rank, w)
  for (size_t w = 0; w < num_w; ++w) {
    if (per_worker[w] > 0) paused.emplace_back(t.worker_rank[w], w);
  }
  std::sort(paused.begin(), paused.end());
  // Ranks by the GC time the trace names on them, then by pause time (a
  // rank that waits for another's GC pauses too, untraced).
  std::map<int32_t, double> named_gc;
  for (size_t k = 0; k < t.workers.size() && ranks; ++k) {
    for (size_t st = 0; st < t.steps.size(); ++st) {
      const size_t slot = k * t.steps.size() + st;
      if (slot < t.gc_s.size()) named_gc[t.workers[k].rank] += t.gc_s[slot];
    }
  }
  // Then by the pauses in which the rank paused longest of all in its
  // step: the others' pauses in that step are waits for it (untraced waits
  // in a collective show as host gaps too, a little shorter than the pause
  // they wait for), then by all its pause time. Ties go to the lower rank.
  std::vector<std::pair<double, int32_t>> longest_in_step(steps, {0.0, -1});
  for (const auto& [rank, w] : paused) {
    for (size_t step = 0; step < steps; ++step) {
      const double x = per_cell[w * steps + step];
      auto& top = longest_in_step[step];
      if (x > 0 && (top.second < 0 || x > top.first)) top = {x, rank};
    }
  }
  std::map<int32_t, double> led;
  for (const auto& [top_s, rank] : longest_in_step) {
    if (rank >= 0) led[rank] += top_s;
  }
  // (-GC, -led, -pause time, rank, w): most first; ranks are unique, so w
  // never decides.
  std::vector<std::tuple<double, double, double, int32_t, size_t>> order;
  for (const auto& [rank, w] : paused) {
    order.emplace_back(-named_gc[rank], -led[rank], -per_worker[w], rank, w);
  }
  std::sort(order.begin(), order.end());
  for (const auto& o : order) f.ranks.push_back(std::get<3>(o));
  // The worker with the most pauses, as an index into the dense sums.
  const size_t top_w = order.empty() ? 0 : std::get<4>(order.front());
  // The launch slowdown, less the part named data loading explains (a
  // DataLoader stall is data loading's finding, not a pause).
  const double blocking = r.slowdown - 1;
  const double launch =
      (r.launch_slowdown - 1) *
      (total + named_loading > 0 ? total / (total + named_loading) : 1.0);
  // Pauses matter when they are a real share of the step on the rank that
  // has most of them, and more so when a few ranks have most of them.
  const double step_s = MeanOf(r.step_t_observed);
  const double top = order.empty() ? 0 : per_worker[top_w];
  const double share =
      step_s > 0 ? top / (step_s * static_cast<double>(t.steps.size())) : 0;
  const double concentration = total > 0 ? top / total : 0;
  double gc = 0;  // named GC time of the rank with the most pauses, s
  if (!f.ranks.empty()) {
    // The steps with a pause of the rank's own magnitude (a quarter of its
    // worst step at least; scheduling noise of a few ms is not one).
    const double* mine = &per_cell[top_w * steps];
    double worst = 0;
    for (size_t step = 0; step < steps; ++step) {
      worst = std::max(worst, mine[step]);
    }
    size_t hit = 0;
    for (size_t step = 0; step < steps; ++step) {
      hit += mine[step] > 0 && mine[step] >= 0.25 * worst;
    }
    f.step_share =
        static_cast<double>(hit) / static_cast<double>(t.steps.size());
    gc = named_gc[f.ranks.front()];
  }
  if (pauses > 0) {
    // ... and when the host delays cost the job a real share of its time
    // (a launch slowdown of kJobShare; scheduling noise costs a few %).
    f.confidence = Clamp01(launch / std::max(launch + blocking, 1e-9) * 1.5) *
                   // On one rank, or across the job (unsynchronised GC at
                   // scale: each rank pauses rarely, some rank every step).
                   std::max(Clamp01(share / kPauseShare),
                            Clamp01(launch / kJobShare)) *
                   (0.5 + 0.5 * Clamp01(concentration / 0.5)) *
                   Clamp01(launch / kJobShare);
    // The trace names the pause (gc.collect on that rank, a real share of
    // its step): the cause is known, not inferred.
    const double gc_share =
        step_s > 0 ? gc / (step_s * static_cast<double>(t.steps.size())) : 0;
    if (gc_share >= kPauseShare && launch >= kJobShare) f.confidence = 1.0;
  }
  double lined_up = 0, steps_paused = 0;
  for (const uint64_t n : t.pauses) {
    lined_up = std::max(lined_up, static_cast<double>(n));
    steps_paused += n > 0;
  }
  f.evidence =
      Format(
          "%.0f host pauses of at least 5 ms before an op (mean %.1f ms, "
          "longest %.1f ms) on %.0f workers",
          static_cast<double>(pauses),
          pauses ? 1e3 * total / static_cast<double>(pauses) : 0, 1e3 * longest,
          static_cast<double>(paused.size())) +
      Format(
          " in %.0f of the steps; at most %.0f in one step; "
          "launch slowdown %.3f (%.3f of it not data loading)",
          steps_paused, lined_up, r.launch_slowdown,
          1 + launch) +
      Format(
          "; the rank with the most pauses %.1f%% of its step time and "
          "%.0f%% of all pause time",
          100 * share, 100 * concentration) +
      (gc > 0 ? Format("; its trace names %.1f ms of garbage collection per "
                       "step",
                       1e3 * gc / static_cast<double>(t.steps.size()))
              : std::string());
  return f;
}

}  // namespace strag::diagnose
