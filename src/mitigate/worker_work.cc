// SPDX-License-Identifier: Apache-2.0
#include "mitigate/worker_work.h"

#include <algorithm>
#include <cmath>

#include "base/median.h"

namespace strag::mitigate {

std::vector<double> ComputePerStep(const whatif::PreparedTrace& t,
                                   const Cells& cells) {
  const size_t steps = t.steps.size(), inst = t.num_instances();
  std::vector<double> out(cells.all().size() * steps, 0.0);
  for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
    if (!IsComputeType(t.model.keys[v].type)) continue;
    for (size_t i = 0; i < inst; ++i) {
      out[cells.IndexOf(i, v) * steps + cells.StepOf(i)] += t.cost[t.Slot(v, i)];
    }
  }
  return out;
}

std::vector<double> SpeedFactors(const whatif::PreparedTrace& t,
                                 const Cells& cells,
                                 const std::vector<double>& per_step) {
  const size_t steps = t.steps.size(), n = cells.all().size();
  const auto pp = static_cast<size_t>(cells.job_pp());
  std::vector<double> factor(n, 1.0);
  // Mean compute of each PP stage in each step.
  std::vector<double> stage_sum(pp * steps, 0.0);
  std::vector<double> stage_count(pp, 0.0);
  for (size_t c = 0; c < n; ++c) {
    const auto s = static_cast<size_t>(cells.all()[c].place.pp);
    stage_count[s] += 1;
    for (size_t k = 0; k < steps; ++k) {
      stage_sum[s * steps + k] += per_step[c * steps + k];
    }
  }
  std::vector<double> ratios;
  for (size_t c = 0; c < n; ++c) {
    const auto s = static_cast<size_t>(cells.all()[c].place.pp);
    ratios.clear();
    for (size_t k = 0; k < steps; ++k) {
      const double mean = stage_sum[s * steps + k] / stage_count[s];
      if (mean > 0) ratios.push_back(per_step[c * steps + k] / mean);
    }
    if (ratios.empty()) continue;
    const double count = static_cast<double>(ratios.size());
    const double median = Median(&ratios);
    // Only a speed the steps' own spread cannot explain: the median off 1
    // by three standard errors (of a median: 1.25 sigma / sqrt(n), sigma
    // from the MAD).
    for (double& x : ratios) x = std::abs(x - median);
    const double sigma = 1.4826 * Median(&ratios);
    const double se = 1.2533 * sigma / std::sqrt(count);
    if (median > 0 && std::abs(median - 1) > 3 * se) factor[c] = median;
  }
  return factor;
}

std::vector<std::pair<graph::NodeId, size_t>> PeerSlots(
    const whatif::PreparedTrace& t, const Cells& cells, graph::NodeId v,
    size_t instance, const std::vector<uint8_t>& skip) {
  std::vector<std::pair<graph::NodeId, size_t>> out;
  const Cell& me = cells.Of(instance, v);
  const graph::OpKey& key = t.model.keys[v];
  const size_t dp = static_cast<size_t>(t.dp);
  const size_t step_base = cells.StepOf(instance) * dp;
  for (size_t c = 0; c < cells.all().size(); ++c) {
    const Cell& other = cells.all()[c];
    if (skip[c] || other.place.pp != me.place.pp ||
        other.place.rank == me.place.rank) {
      continue;
    }
    const int64_t node =
        t.model.index.Find({key.type, key.seq_id, other.model_stage});
    if (node < 0) continue;
    out.emplace_back(static_cast<graph::NodeId>(node),
                     step_base + static_cast<size_t>(other.model_dp));
  }
  return out;
}

std::string ReplicaLanesMissing(const whatif::PreparedTrace& t) {
  if (t.layout == whatif::Layout::kRanks) {
    return "profiler traces: a DP replica is a set of ranks, which the "
           "replay cannot add, drop or decouple (ops CSV and simulated jobs "
           "only)";
  }
  if (t.dp < 2) return "one DP replica";
  return "";
}

int32_t Microbatches(const whatif::PreparedTrace& t) {
  int32_t forwards = 0;
  for (const graph::OpKey& k : t.model.keys) {
    forwards += k.type == trace::OpType::kForwardCompute && k.stage == 0;
  }
  return forwards / std::max(t.vpp, 1);
}

}  // namespace strag::mitigate
