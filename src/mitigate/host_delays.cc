// SPDX-License-Identifier: Apache-2.0
#include "mitigate/host_delays.h"

#include <algorithm>
#include <cmath>

#include "base/median.h"

namespace strag::mitigate {

HostDelays FindHostDelays(const whatif::PreparedTrace& t, const Cells& cells) {
  const size_t n = t.num_nodes(), inst = t.num_instances();
  const size_t steps = t.steps.size(), num_cells = cells.all().size();
  HostDelays h;
  h.stall.assign(n * inst, 0.0f);
  h.pause.assign(n * inst, 0.0f);
  h.pause_in_cost.assign(n * inst, 0.0f);
  h.median.assign(n, 0.0f);
  h.stall_per_step.assign(num_cells * steps, 0.0);
  h.pause_per_step.assign(num_cells * steps, 0.0);
  const bool ranks = t.layout == whatif::Layout::kRanks;
  // Ops CSV: a delay before a worker's first forward of a step is an input
  // stall or a pause that happened to fall there; a pause falls on each of
  // the F forwards alike, so a worker's delays at its other forwards tell
  // how many of its first-forward ones are pauses.
  std::vector<double> first(num_cells, 0), other(num_cells, 0);
  int32_t forwards = 0;
  for (const graph::OpKey& key : t.model.keys) {
    forwards += key.type == trace::OpType::kForwardCompute && key.stage == 0;
  }
  std::vector<double> values;
  for (graph::NodeId v = 0; v < n; ++v) {
    values.assign(
        t.launch_delay.begin() + static_cast<ptrdiff_t>(v * inst),
        t.launch_delay.begin() + static_cast<ptrdiff_t>((v + 1) * inst));
    h.median[v] = static_cast<float>(Median(&values));
    const graph::OpKey& key = t.model.keys[v];
    if (key.type != trace::OpType::kForwardCompute) continue;
    for (size_t i = 0; i < inst; ++i) {
      if (t.launch_delay[t.Slot(v, i)] - h.median[v] < kHostDelayS) continue;
      (key.seq_id == 0 ? first : other)[cells.IndexOf(i, v)] += 1;
    }
  }
  // Pauses expected at a worker's first forward: the job's rate at the
  // other forwards (per worker, pooled: a worker has few pauses). A worker
  // within the Poisson noise of it (3 sigma) has no stalls; past it, the
  // expected share of its first-forward delays are pauses.
  double expected = 0;
  if (forwards > 1 && num_cells > 0) {
    for (double x : other) expected += x;
    expected /= static_cast<double>(num_cells) * (forwards - 1);
  }
  std::vector<float> pause_share(num_cells, 0.0f);
  for (size_t c = 0; c < num_cells; ++c) {
    if (first[c] <= expected + 3 * std::sqrt(expected) + 1 && expected > 0) {
      pause_share[c] = 1.0f;
    } else if (first[c] > 0) {
      pause_share[c] = static_cast<float>(std::min(1.0, expected / first[c]));
    }
  }
  auto add = [&](size_t slot, size_t at, float stall, float pause) {
    h.stall[slot] += stall;
    h.pause[slot] += pause;
    h.stall_per_step[at] += stall;
    h.pause_per_step[at] += pause;
  };
  // Profiler traces name data loading and GC per (worker, step): that much
  // of the worker's launch delays in the step are stalls (from its first
  // ops on) and pauses (from its longest delays on), whether or not they
  // recur every step (a pause every step is the op's median delay). Any op
  // of the worker: the host that stalls delays its collectives too.
  std::vector<float> used(n * inst, 0.0f);
  if (ranks) {
    std::vector<std::vector<graph::NodeId>> nodes_of(num_cells);
    for (graph::NodeId v = 0; v < n; ++v) {
      nodes_of[cells.IndexOf(0, v)].push_back(v);
    }
    std::vector<size_t> order;
    for (size_t c = 0; c < num_cells; ++c) {
      for (size_t k = 0; k < steps; ++k) {
        const size_t at = c * steps + k;
        float loading = at < t.data_loading_s.size() ? t.data_loading_s[at] : 0;
        float gc = at < t.gc_s.size() ? t.gc_s[at] : 0;
        order.clear();
        for (graph::NodeId v : nodes_of[c]) {
          const size_t slot = t.Slot(v, k);  // ranks: instance = step
          const float take =
              std::min(std::max(t.launch_delay[slot], 0.0f), loading);
          loading -= take;
          used[slot] += take;
          add(slot, at, take, 0);
          order.push_back(slot);
        }
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
          return t.launch_delay[x] - used[x] > t.launch_delay[y] - used[y];
        });
        for (size_t slot : order) {
          const float take =
              std::min(std::max(t.launch_delay[slot] - used[slot], 0.0f), gc);
          gc -= take;
          used[slot] += take;
          add(slot, at, 0, take);
        }
        // The rest ran inside a compute segment (between two of its ops):
        // from the longest segments of the step.
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
          return t.cost[x] > t.cost[y];
        });
        for (size_t slot : order) {
          if (gc <= 0) break;
          if (!IsComputeType(t.model.keys[slot / inst].type)) continue;
          const auto take = static_cast<float>(
              std::min(static_cast<double>(gc), t.cost[slot]));
          gc -= take;
          h.pause_in_cost[slot] += take;
          h.pause_per_step[at] += take;
        }
      }
    }
  }
  // What no name explains: delays past the op's median.
  for (graph::NodeId v = 0; v < n; ++v) {
    const graph::OpKey& key = t.model.keys[v];
    // Comm ops are posted when the program reaches them (a recv early or
    // late): only compute waits for the host that launches it.
    if (!IsComputeType(key.type)) continue;
    const bool at_first =
        !ranks && key.type == trace::OpType::kForwardCompute && key.seq_id == 0;
    for (size_t i = 0; i < inst; ++i) {
      const size_t slot = t.Slot(v, i);
      const float excess = t.launch_delay[slot] - used[slot] - h.median[v];
      if (excess < kHostDelayS) continue;
      const size_t cell = cells.IndexOf(i, v);
      const float stall = at_first ? excess * (1.0f - pause_share[cell]) : 0.0f;
      add(slot, cell * steps + cells.StepOf(i), stall, excess - stall);
    }
  }
  return h;
}

DelayEvents EventsOf(const std::vector<double>& per_step, const Cells& cells,
                     size_t steps) {
  DelayEvents e;
  for (size_t at = 0; at < per_step.size(); ++at) {
    if (per_step[at] < kHostDelayS) continue;
    e.sizes.push_back(per_step[at]);
    e.total += per_step[at];
    e.longest = std::max(e.longest, per_step[at]);
    e.ranks.insert(cells.all()[at / steps].place.rank);
  }
  return e;
}

}  // namespace strag::mitigate
