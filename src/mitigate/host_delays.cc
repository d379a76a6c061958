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
    values.assign(t.launch_delay.begin() + static_cast<ptrdiff_t>(v * inst),
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
  // Profiler traces name data loading per (worker, step): that much of the
  // worker's delays in the step are stalls, the rest pauses.
  std::vector<float> loading = ranks ? t.data_loading_s : std::vector<float>{};
  for (graph::NodeId v = 0; v < n; ++v) {
    const graph::OpKey& key = t.model.keys[v];
    // Comm ops are posted when the program reaches them (a recv early or
    // late): only compute waits for the host that launches it.
    if (!IsComputeType(key.type)) continue;
    const bool at_first = !ranks &&
                          key.type == trace::OpType::kForwardCompute &&
                          key.seq_id == 0;
    for (size_t i = 0; i < inst; ++i) {
      const size_t slot = t.Slot(v, i);
      const float excess = t.launch_delay[slot] - h.median[v];
      if (excess < kHostDelayS) continue;
      const size_t cell = cells.IndexOf(i, v);
      const size_t at = cell * steps + cells.StepOf(i);
      float stall = at_first ? excess * (1.0f - pause_share[cell]) : 0.0f;
      // ranks: worker index == cell index (one cell per model stage)
      if (at < loading.size() && loading[at] > 0) {
        stall = std::min(excess, loading[at]);
        loading[at] -= stall;
      }
      h.stall[slot] = stall;
      h.pause[slot] = excess - stall;
      h.stall_per_step[at] += stall;
      h.pause_per_step[at] += excess - stall;
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
