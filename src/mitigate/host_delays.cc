// SPDX-License-Identifier: Apache-2.0
#include "mitigate/host_delays.h"

#include <algorithm>

#include "base/median.h"

namespace strag::mitigate {

HostDelays FindHostDelays(const whatif::PreparedTrace& t, const Cells& cells) {
  const size_t n = t.num_nodes(), inst = t.num_instances();
  const size_t steps = t.steps.size();
  HostDelays h;
  h.stall.assign(n * inst, 0.0f);
  h.pause.assign(n * inst, 0.0f);
  h.median.assign(n, 0.0f);
  h.stall_per_step.assign(cells.all().size() * steps, 0.0);
  h.pause_per_step.assign(cells.all().size() * steps, 0.0);
  const bool ranks = t.layout == whatif::Layout::kRanks;
  // Profiler traces name data loading per (worker, step): that much of the
  // worker's delays in the step are stalls, the rest pauses.
  std::vector<float> loading = ranks ? t.data_loading_s : std::vector<float>{};
  std::vector<double> values;
  for (graph::NodeId v = 0; v < n; ++v) {
    values.assign(t.launch_delay.begin() + static_cast<ptrdiff_t>(v * inst),
                  t.launch_delay.begin() + static_cast<ptrdiff_t>((v + 1) * inst));
    h.median[v] = static_cast<float>(Median(&values));
    const graph::OpKey& key = t.model.keys[v];
    // Comm ops are posted when the program reaches them (a recv early or
    // late): only compute waits for the host that launches it.
    if (!IsComputeType(key.type)) continue;
    // The first forward of a worker's step waits for its input (ops CSV).
    const bool first = !ranks && key.type == trace::OpType::kForwardCompute &&
                       key.seq_id == 0;
    for (size_t i = 0; i < inst; ++i) {
      const size_t slot = t.Slot(v, i);
      float excess = t.launch_delay[slot] - h.median[v];
      if (excess < kHostDelayS) continue;
      const size_t cell = cells.IndexOf(i, v);
      const size_t at = cell * steps + cells.StepOf(i);
      float stall = first ? excess : 0.0f;
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

}  // namespace strag::mitigate
