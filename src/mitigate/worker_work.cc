// SPDX-License-Identifier: Apache-2.0
#include "mitigate/worker_work.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "base/median.h"

namespace strag::mitigate {

std::vector<double> SpeedFactors(
    const whatif::PreparedTrace& t, const Cells& cells,
    const std::vector<std::vector<double>>& per_worker) {
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
      stage_sum[s * steps + k] += per_worker[c][k];
    }
  }
  std::vector<double> ratios;
  for (size_t c = 0; c < n; ++c) {
    const auto s = static_cast<size_t>(cells.all()[c].place.pp);
    ratios.clear();
    for (size_t k = 0; k < steps; ++k) {
      const double mean = stage_sum[s * steps + k] / stage_count[s];
      if (mean > 0) ratios.push_back(per_worker[c][k] / mean);
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

std::vector<double> PeerTypical(const whatif::PreparedTrace& t,
                                const Cells& cells,
                                const std::vector<uint8_t>& skip,
                                std::vector<size_t>* peers) {
  const size_t n = t.num_nodes(), inst = t.num_instances();
  const auto dp = static_cast<size_t>(t.dp);
  // The nodes that are one op on the workers of a stage: an ops CSV's node
  // (its DP peers are the other instances of the step), a profiler trace's
  // (type, position) on the ranks of one PP stage.
  std::map<std::tuple<int32_t, int, int32_t>, size_t> ids;
  std::vector<std::vector<graph::NodeId>> groups;
  for (graph::NodeId v = 0; v < n; ++v) {
    const graph::OpKey& k = t.model.keys[v];
    size_t g = groups.size();
    if (t.layout == whatif::Layout::kRanks) {
      g = ids.emplace(std::tuple(cells.Of(0, v).place.pp,
                                 static_cast<int>(k.type), k.seq_id),
                      groups.size())
              .first->second;
    }
    if (g == groups.size()) groups.emplace_back();
    groups[g].push_back(v);
  }
  std::vector<double> out(n * inst, 0.0);
  auto counted = [&](size_t slot, graph::NodeId v) {
    return skip.empty() || !skip[cells.IndexOf(slot % inst, v)];
  };
  for (const std::vector<graph::NodeId>& group : groups) {
    for (size_t step = 0; step < t.steps.size(); ++step) {
      double sum = 0, count = 0;
      for (graph::NodeId v : group) {
        for (size_t d = 0; d < dp; ++d) {
          const size_t slot = t.Slot(v, step * dp + d);
          if (!counted(slot, v)) continue;
          sum += t.cost[slot];
          count += 1;
        }
      }
      for (graph::NodeId v : group) {
        for (size_t d = 0; d < dp; ++d) {
          const size_t slot = t.Slot(v, step * dp + d);
          const bool self = counted(slot, v);
          const double others = count - (self ? 1 : 0);
          out[slot] = others > 0 ? (sum - (self ? t.cost[slot] : 0.0)) / others
                                 : t.cost[slot];
        }
      }
    }
  }
  if (peers) {
    peers->assign(cells.all().size(), 0);
    std::vector<size_t> per_stage(static_cast<size_t>(cells.job_pp()), 0);
    for (const Cell& c : cells.all())
      per_stage[static_cast<size_t>(c.place.pp)]++;
    for (size_t c = 0; c < cells.all().size(); ++c) {
      (*peers)[c] = per_stage[static_cast<size_t>(cells.all()[c].place.pp)] - 1;
    }
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
