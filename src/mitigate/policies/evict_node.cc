// SPDX-License-Identifier: Apache-2.0
// evict_node: replace the node of the worst worker with a spare (reference:
// mitigations.md §5). The node's workers keep their work and lose their
// slowness: each op over the worker's ratio to the same ops of its DP peers
// in the same steps (summed; compute and communication apart); a worker without peers keeps
// its ops. Costs a restart and the progress since the last checkpoint (half
// an interval on average).

#include <algorithm>
#include <iterator>
#include <set>
#include <string>

#include "base/median.h"
#include "base/str_format.h"
#include "mitigate/policies/policies.h"
#include "mitigate/worker_work.h"

namespace strag::mitigate {
namespace {

// "ranks 0-7", "ranks 0-3, 8", "rank 5".
std::string RankRanges(const std::set<int32_t>& ranks) {
  std::string out;
  for (auto it = ranks.begin(); it != ranks.end();) {
    auto end = it;
    while (std::next(end) != ranks.end() && *std::next(end) == *end + 1) ++end;
    out += (out.empty() ? "" : ", ") + std::to_string(*it) +
           (end == it ? "" : "-" + std::to_string(*end));
    it = std::next(end);
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

class EvictNode final : public Policy {
 public:
  std::string_view name() const override { return "evict_node"; }
  Family family() const override { return Family::kOperational; }

  Applicability Check(const JobView& job, const Cells& cells) const override {
    if (cells.all().size() < 2 || job.result.workers.empty()) {
      return {false, "one traced worker: nothing to compare a replacement with"};
    }
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string* why) const override {
    const whatif::PreparedTrace& t = job.trace;
    const int32_t worst = job.result.workers.front().rank;
    int32_t node = -1;
    for (const Cell& c : cells.all()) {
      if (c.place.rank == worst) node = c.place.node;
    }
    std::vector<uint8_t> evicted(cells.all().size(), 0);
    std::set<int32_t> ranks;
    for (size_t c = 0; c < cells.all().size(); ++c) {
      if (cells.all()[c].place.node == node) {
        evicted[c] = 1;
        ranks.insert(cells.all()[c].place.rank);
      }
    }
    // The node's workers at a typical machine's speed: each keeps its own
    // work (its sequences, its stage) and loses only its slowness, the
    // median of its ops over the same ops of its DP peers in the same step
    // (compute and communication apart: a slow GPU, a slow link).
    const size_t inst = t.num_instances();
    // Peers on the node count too: a slow GPU is one GPU (the median over
    // the peers stays a typical machine's).
    const std::vector<uint8_t> none(cells.all().size(), 0);
    // Per (worker, compute or comm): its time and its peers' typical time
    // for the same ops, summed (many short segments weigh what they last).
    std::vector<double> own(2 * cells.all().size(), 0.0),
        typical(own.size(), 0.0);
    std::vector<double> peer;
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const size_t kind = t.model.graph.is_comm(v) ? 1 : 0;
      for (size_t i = 0; i < inst; ++i) {
        const size_t c = cells.IndexOf(i, v);
        if (!evicted[c]) continue;
        peer.clear();
        for (auto [u, j] : PeerSlots(t, cells, v, i, none)) {
          peer.push_back(t.cost[t.Slot(u, j)]);
        }
        if (peer.empty()) continue;
        own[2 * c + kind] += t.cost[t.Slot(v, i)];
        typical[2 * c + kind] += Median(&peer);
      }
    }
    if (std::all_of(typical.begin(), typical.end(),
                    [](double x) { return !(x > 0); })) {
      *why = "the workers of node " + std::to_string(node) +
             " have no DP peers: nothing tells a slow machine from the work "
             "it does";
      return {};
    }
    std::vector<double> slowness(own.size(), 1.0);
    for (size_t k = 0; k < own.size(); ++k) {
      if (typical[k] > 0) slowness[k] = std::max(1.0, own[k] / typical[k]);
    }
    Proposal p;
    Rewrite& rw = p.rewrite;
    rw.cost.assign(t.cost.begin(), t.cost.end());
    double worst_slowness = 1;
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const size_t kind = t.model.graph.is_comm(v) ? 1 : 0;
      for (size_t i = 0; i < inst; ++i) {
        const size_t c = cells.IndexOf(i, v);
        if (!evicted[c]) continue;
        rw.cost[t.Slot(v, i)] /= slowness[2 * c + kind];
        worst_slowness = std::max(worst_slowness, slowness[2 * c + kind]);
      }
    }
    const int32_t gpn = job.econ.gpus_per_node;
    std::string rank_text;
    if (t.layout == whatif::Layout::kMegatron) {
      rank_text = StrFormat("ranks %d-%d", node * gpn, node * gpn + gpn - 1);
    } else {
      rank_text = RankRanges(ranks);
    }
    p.action = StrFormat("replace node %d (%s) with a spare and restart from "
                         "the last checkpoint",
                         node, rank_text.c_str());
    p.params = StrFormat("node=%d", node);
    const whatif::Counterfactual& mw = job.result.fix_worst_workers;
    p.evidence = StrFormat(
        "rank %d is the worst worker (score %.3f); its node's ops take up to "
        "%.2fx their DP peers'; fixing the worst %zu worker(s) recovers M_W "
        "= %.2f of the slowdown",
        worst, job.result.workers.front().score, worst_slowness,
        mw.ranks.size(), mw.rem);
    p.effects.restart = true;
    p.effects.downtime_s =
        job.econ.restart_s + 0.5 * job.econ.checkpoint_interval_s;
    p.effects.semantics = Semantics::kIdentical;
    if (job.diagnosis.persistence_known && !job.diagnosis.persistent) {
      p.effects.caveat =
          "the slowdown is transient: a replacement pays only if it lasts "
          "past the break-even time";
    }
    std::vector<Proposal> out;
    out.push_back(std::move(p));
    return out;
  }
};

}  // namespace

std::unique_ptr<Policy> NewEvictNode() { return std::make_unique<EvictNode>(); }

}  // namespace strag::mitigate
