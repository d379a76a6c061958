// SPDX-License-Identifier: Apache-2.0
// data_loading: ranks whose host is late at the start of steps (named
// DataLoader time, or the start gap).
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "base/median.h"
#include "diagnose/detectors.h"
#include "diagnose/evidence.h"

namespace strag::diagnose {

Finding DetectDataLoading(const TraceEvidence& t,
                          const whatif::WhatIfResult& r) {
  Finding f{Cause::kDataLoading, 0, {}, ""};
  // The trace's own DataLoader time where it names it, else the host gap at
  // the start of each step.
  const bool named = !t.data_loading_s.empty();
  const auto times =
      named ? NamedHostTime(t, t.data_loading_s) : StepStartGaps(t);
  if (times.size() < 2 || t.steps.empty()) return f;
  // Per step, a rank is late when its time exceeds the median rank's by
  // 2 ms and 2% of the step.
  const size_t steps = t.steps.size();
  std::map<int32_t, std::pair<size_t, double>> late;  // steps, excess s
  for (size_t s = 0; s < steps; ++s) {
    std::vector<double> column;
    for (const auto& [rank, g] : times) column.push_back(g[s]);
    const double median = Median(&column);
    const double bar =
        std::max(0.002, 0.02 * static_cast<double>(t.step_t_base[s]));
    for (const auto& [rank, g] : times) {
      if (g[s] - median < bar) continue;
      auto& [n, excess] = late[rank];
      ++n;
      excess += g[s] - median;
    }
  }
  std::vector<std::pair<double, int32_t>> order;  // most excess first
  for (const auto& [rank, x] : late) order.emplace_back(-x.second, rank);
  if (order.empty()) return f;
  std::sort(order.begin(), order.end());
  for (const auto& [neg, rank] : order) f.ranks.push_back(rank);
  const auto& [n, excess] = late[f.ranks.front()];
  f.step_share = static_cast<double>(n) / static_cast<double>(steps);
  const double blocking = r.slowdown - 1, launch = r.launch_slowdown - 1;
  // Few late ranks among many is the signature; a job where most ranks are
  // late is a host-wide pause instead. A stall matters from 5% of the step
  // time, persistent or not.
  const double few = f.ranks.size() * 2 <= times.size() ? 1.0 : 0.5;
  const double per_step = excess / static_cast<double>(steps);
  const double share = per_step / std::max(MeanOf(r.step_t_observed), 1e-12);
  // Unnamed, late starts are data loading when they are most of the job's
  // host delay; where pauses hit anywhere in the steps, one that happens to
  // fall at a step's start is the same thing (GC), not an input pipeline.
  double late_total = 0;
  for (const auto& [rank, x] : late) late_total += x.second;
  const double at_start =
      named ? 1.0 : late_total / std::max(HostDelay(t), 1e-12);
  f.confidence = Clamp01(launch / std::max(launch + blocking, 1e-9) * 1.5) *
                 Clamp01(share / 0.05) * few * Clamp01(at_start / 0.5);
  f.evidence =
      Format(named ? "rank %.0f waits for its DataLoader in %.0f of %.0f steps "
                     "(%.1f ms more than the median rank on average)"
                   : "rank %.0f starts %.0f of %.0f steps late on the host (a "
                     "gap before its first op, %.1f ms more than the median "
                     "rank on average)",
             static_cast<double>(f.ranks.front()), static_cast<double>(n),
             static_cast<double>(steps),
             1e3 * excess / static_cast<double>(n)) +
      Format("; launch slowdown %.3f", r.launch_slowdown);
  return f;
}

}  // namespace strag::diagnose
