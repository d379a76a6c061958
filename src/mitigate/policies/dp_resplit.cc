// SPDX-License-Identifier: Apache-2.0
// dp_resplit: give a persistently slow DP replica fewer microbatches and the
// others more (Greyhound S2; reference: mitigations.md §5.1, with the
// greedy min-max allocation instead of its variance QP). Replica i's step
// takes about (n_i + p - 1) t_i for n_i microbatches of t_i each (1F1B),
// t_i its slowest stage's microbatch at its workers' persistent speed;
// units go one by one to the replica that would finish first. Replayed as
// each replica's compute scaled by n_i / m (exact for p = 1; with a
// pipeline the fill and drain change too).

#include <algorithm>

#include "base/partition.h"
#include "base/str_format.h"
#include "diagnose/evidence.h"
#include "mitigate/policies/policies.h"
#include "mitigate/worker_work.h"

namespace strag::mitigate {
namespace {

class DpResplit final : public Policy {
 public:
  std::string_view name() const override { return "dp_resplit"; }
  Family family() const override { return Family::kBalance; }

  Applicability Check(const JobView& job, const Cells&) const override {
    std::string missing = ReplicaLanesMissing(job.trace);
    if (!missing.empty()) return {false, missing};
    if (Microbatches(job.trace) < 2) {
      return {false, "one microbatch per replica: nothing to move"};
    }
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string* why) const override {
    const whatif::PreparedTrace& t = job.trace;
    const auto dp = static_cast<size_t>(t.dp);
    const size_t steps = t.steps.size();
    const int32_t m = Microbatches(t);
    // t_i: the replica's slowest stage per microbatch, at the replica's
    // persistent speed on that stage (SpeedFactors: medians over steps, so
    // the sequences a replica happened to draw do not count as slowness).
    const auto per_worker = diagnose::WorkerComputePerStep(t);
    const std::vector<double> speed = SpeedFactors(t, cells, per_worker);
    std::vector<double> stage_work(static_cast<size_t>(t.pp), 0.0);
    for (size_t c = 0; c < cells.all().size(); ++c) {
      for (size_t k = 0; k < steps; ++k) {
        stage_work[static_cast<size_t>(cells.all()[c].model_stage)] +=
            per_worker[c][k] / speed[c];
      }
    }
    std::vector<double> unit(dp, 0.0);
    for (size_t c = 0; c < cells.all().size(); ++c) {
      const Cell& cell = cells.all()[c];
      const double per_mb =
          stage_work[static_cast<size_t>(cell.model_stage)] /
          static_cast<double>(dp * steps * static_cast<size_t>(m));
      const auto d = static_cast<size_t>(cell.model_dp);
      unit[d] = std::max(unit[d], speed[c] * per_mb);
    }
    const std::vector<int32_t> n =
        GreedyUnits(unit, int64_t{m} * t.dp, static_cast<double>(t.pp - 1));
    if (std::all_of(n.begin(), n.end(), [&](int32_t x) { return x == m; })) {
      *why = StrFormat(
          "the replicas are balanced: the greedy min-max split keeps %d "
          "microbatches on each",
          m);
      return {};
    }
    Proposal p;
    p.rewrite.cost.assign(t.cost.begin(), t.cost.end());
    const size_t inst = t.num_instances();
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      if (!IsComputeType(t.model.keys[v].type)) continue;
      for (size_t i = 0; i < inst; ++i) {
        p.rewrite.cost[t.Slot(v, i)] *= static_cast<double>(n[i % dp]) / m;
      }
    }
    std::string moved;
    size_t shown = 0, changed = 0;
    // The replica that gives up the most microbatches (the slowest of
    // those).
    size_t slowest = 0;
    for (size_t d = 1; d < dp; ++d) {
      if (n[d] < n[slowest] ||
          (n[d] == n[slowest] && unit[d] > unit[slowest])) {
        slowest = d;
      }
    }
    for (size_t d = 0; d < dp; ++d) {
      if (n[d] == m) continue;
      ++changed;
      if (shown++ < 4) {
        moved +=
            StrFormat("%sreplica %zu: %d", moved.empty() ? "" : ", ", d, n[d]);
      }
    }
    if (changed > 4) moved += StrFormat(", ... (%zu replicas change)", changed);
    p.action = StrFormat(
        "re-split each step's microbatches across DP replicas (%s; the "
        "others %d) and weight each replica's loss by n_i / %d",
        moved.c_str(), m, m);
    p.params = "microbatches=[";
    for (size_t d = 0; d < dp; ++d) {
      p.params += (d ? "," : "") + std::to_string(n[d]);
    }
    p.params += "]";
    std::vector<double> sorted = unit;
    std::sort(sorted.begin(), sorted.end());
    p.evidence = StrFormat(
        "replica %zu computes %.3fx the median replica per microbatch (at "
        "its workers' persistent speed)",
        slowest, unit[slowest] / sorted[sorted.size() / 2]);
    p.effects.semantics = Semantics::kIdentical;
    p.effects.restart = true;
    p.effects.downtime_s = job.econ.restart_s;
    p.effects.caveat =
        "needs per-replica microbatch counts with loss and gradient weights "
        "n_i / m (as Greyhound, which re-plans online without a restart)";
    std::vector<Proposal> out;
    out.push_back(std::move(p));
    return out;
  }
};

}  // namespace

std::unique_ptr<Policy> NewDpResplit() { return std::make_unique<DpResplit>(); }

}  // namespace strag::mitigate
