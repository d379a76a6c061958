// SPDX-License-Identifier: Apache-2.0
#include "whatif/robust_ideal.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "base/f32.h"
#include "base/median.h"

namespace strag::whatif {
namespace {

using graph::NodeId;

// The steps that define a normal step: traced time at most kTypicalStep x
// the median step's (a warm-up step or a transient stall is no ideal).
std::vector<uint8_t> TypicalSteps(const PreparedTrace& t) {
  std::vector<double> times(t.step_t_base.begin(), t.step_t_base.end());
  const double bar = kTypicalStep * Median(&times);
  std::vector<uint8_t> typical;
  for (float x : t.step_t_base) typical.push_back(x <= bar);
  return typical;
}

// Mean of node v's costs over the typical steps (kRanks: instance = step).
double TypicalMean(std::span<const double> cost_nd, NodeId v, size_t inst,
                   const std::vector<uint8_t>& typical) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < inst; ++i) {
    if (!typical[i]) continue;
    sum += cost_nd[v * inst + i];
    ++n;
  }
  return n ? sum / static_cast<double>(n) : 0.0;
}

// The ranks (indices) left out of the ideal: per stage, those whose mean
// compute per step exceeds the stage's lower median by kOutlierShare and,
// with three ranks or more, its median by 4 scaled MADs (the stage's own
// spread: input-dependent work is not an outlier).
std::vector<uint8_t> OutlierRanks(const PreparedTrace& t,
                                  std::span<const double> cost_nd,
                                  const std::vector<int32_t>& role,
                                  const std::vector<uint8_t>& typical) {
  const size_t inst = t.num_instances();
  std::vector<double> compute(t.topology.places.size(), 0.0);
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    if (t.model.graph.is_comm(v) ||
        trace::IsIdealisedAsComm(t.model.keys[v].type)) {
      continue;
    }
    const auto r = static_cast<size_t>(t.model.keys[v].stage);
    if (r < compute.size())
      compute[r] += TypicalMean(cost_nd, v, inst, typical);
  }
  std::map<int32_t, std::vector<double>> by_stage;
  for (size_t r = 0; r < compute.size(); ++r) {
    by_stage[role[r]].push_back(compute[r]);
  }
  std::map<int32_t, double> bar;
  for (auto& [stage, x] : by_stage) {
    std::vector<double> copy = x;
    double b = LowerMedian(&copy) * (1 + kOutlierShare);
    if (x.size() >= 3) {
      const double median = Median(&x);
      std::vector<double> dev;
      for (double y : x) dev.push_back(std::abs(y - median));
      b = std::max(b, median + 4 * 1.4826 * Median(&dev));
    }
    bar[stage] = b;
  }
  std::vector<uint8_t> out(compute.size(), 0);
  for (size_t r = 0; r < compute.size(); ++r) {
    out[r] = compute[r] > bar[role[r]];
  }
  return out;
}

// Mean compute cost of a pool's nodes over the ranks not left out.
double PoolCompute(const std::vector<NodeId>& nodes, const PreparedTrace& t,
                   std::span<const double> cost_nd,
                   const std::vector<uint8_t>& left_out,
                   const std::vector<uint8_t>& typical) {
  const size_t inst = t.num_instances();
  double sum = 0, all = 0;
  size_t kept = 0;
  for (NodeId v : nodes) {
    const double m = TypicalMean(cost_nd, v, inst, typical);
    all += m;
    const auto r = static_cast<size_t>(t.model.keys[v].stage);
    if (r < left_out.size() && left_out[r]) continue;
    sum += m;
    ++kept;
  }
  return kept ? sum / static_cast<double>(kept)
              : all / static_cast<double>(nodes.size());
}

}  // namespace

std::vector<double> RoleIdealCosts(const PreparedTrace& t,
                                   std::span<const double> cost_nd) {
  const size_t inst = t.num_instances();
  std::vector<int32_t> rank_role;  // rank index -> stage
  for (const trace::RankPlace& p : t.topology.places) {
    rank_role.push_back(p.pp);
  }
  auto role = [&](NodeId v) {
    const auto index = static_cast<size_t>(t.model.keys[v].stage);
    return index < rank_role.size() ? rank_role[index] : 0;
  };
  const std::vector<uint8_t> typical = TypicalSteps(t);
  const std::vector<uint8_t> left_out =
      OutlierRanks(t, cost_nd, rank_role, typical);
  // (role, type, seq, comm?) -> nodes; ordered, so deterministic.
  std::map<std::tuple<int32_t, int, int32_t, bool>, std::vector<NodeId>> pools;
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    const graph::OpKey& k = t.model.keys[v];
    // Transfers pool per position over every stage: a link or collective
    // slow for a whole stage still shows against the others' median, and
    // an async op (an isend's span lasts until its wait()) is compared
    // with the same op of the step, not with every op of its type.
    const bool comm = t.model.graph.is_comm(v);
    pools[{comm ? -1 : role(v), static_cast<int>(k.type), k.seq_id, comm}]
        .push_back(v);
  }
  std::vector<double> ideal(t.num_nodes(), 0.0);
  std::map<int32_t, double> stage_compute;  // role -> ideal compute, s
  for (const auto& [key, nodes] : pools) {
    const auto& [stage, type, seq, comm] = key;
    double value = 0;
    if (comm || trace::IsIdealisedAsComm(static_cast<trace::OpType>(type))) {
      std::vector<double> all;
      for (NodeId v : nodes) {
        for (size_t i = 0; i < inst; ++i) {
          if (typical[i]) all.push_back(cost_nd[v * inst + i]);
        }
      }
      value = comm ? Fl32(Median(&all)) : Median(&all);
    } else {
      value = PoolCompute(nodes, t, cost_nd, left_out, typical);
      stage_compute[stage] += value;
    }
    for (NodeId v : nodes) ideal[v] = value;
  }
  // An evenly partitioned pipeline: every stage does the mean stage's work.
  if (t.topology.pp > 1 && stage_compute.size() > 1) {
    double mean = 0;
    for (const auto& [stage, total] : stage_compute) mean += total;
    mean /= static_cast<double>(stage_compute.size());
    for (NodeId v = 0; v < t.num_nodes(); ++v) {
      if (t.model.graph.is_comm(v) ||
          trace::IsIdealisedAsComm(t.model.keys[v].type)) {
        continue;
      }
      const double total = stage_compute[role(v)];
      if (total > 0) ideal[v] *= mean / total;
    }
  }
  return ideal;
}

}  // namespace strag::whatif
