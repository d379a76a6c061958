// SPDX-License-Identifier: Apache-2.0
// evict_node: replace the node of the worst worker with a spare, or every
// node with a slow worker (compute 5%, communication 50% past its peers;
// reference: mitigations.md
// §5). The replaced workers keep their work and lose their slowness: each
// op over the worker's summed time against a typical peer's for the same
// ops (compute and communication apart). Costs one restart and the progress
// since the last checkpoint (half an interval on average).

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>

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
      return {false,
              "one traced worker: nothing to compare a replacement with"};
    }
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string* why) const override {
    const whatif::PreparedTrace& t = job.trace;
    const std::vector<Cell>& all = cells.all();
    // Each worker's slowness: its time over a typical worker's for the same
    // ops in the same steps, summed (many short segments weigh what they
    // last), compute and communication apart (a slow GPU, a slow link).
    // Twice: the second time without the workers the first found slow (many
    // slow peers would make a slow worker look typical).
    std::vector<size_t> peers;
    std::vector<uint8_t> slow(all.size(), 0);
    std::vector<double> slowness;
    for (int round = 0; round < 2; ++round) {
      std::vector<uint8_t> found;
      slowness =
          Slowness(t, cells, PeerTypical(t, cells, slow, &peers), &found);
      slow = std::move(found);
    }
    const int32_t worst = job.result.workers.front().rank;
    int32_t node = -1;
    for (const Cell& c : all) {
      if (c.place.rank == worst) node = c.place.node;
    }
    bool compared = false;
    for (size_t c = 0; c < all.size(); ++c) {
      compared |= all[c].place.node == node && peers[c] > 0;
    }
    if (!compared) {
      *why = "the workers of node " + std::to_string(node) +
             " have no DP peers: nothing tells a slow machine from the work "
             "it does";
      return {};
    }
    std::vector<Proposal> out;
    out.push_back(Replace(job, cells, {node}, slowness));
    // Every node with a slow worker: at scale someone is always slow, and
    // one restart replaces them all.
    std::set<int32_t> slow_nodes;
    for (size_t c = 0; c < all.size(); ++c) {
      if (slow[c]) slow_nodes.insert(all[c].place.node);
    }
    slow_nodes.insert(node);
    if (slow_nodes.size() > 1) {
      out.push_back(Replace(job, cells, slow_nodes, slowness));
    }
    return out;
  }

 private:
  // Per (cell, compute or comm): the cell's time over its peers' typical
  // time for the same ops, summed, at least 1; `*slow` marks the cells past
  // the thresholds and past three standard errors of their step-to-step
  // ratios (a worker that drew heavier steps by chance is not slow).
  static std::vector<double> Slowness(const whatif::PreparedTrace& t,
                                      const Cells& cells,
                                      const std::vector<double>& typical,
                                      std::vector<uint8_t>* slow) {
    const size_t steps = t.steps.size(), inst = t.num_instances();
    const size_t n = 2 * cells.all().size();
    std::vector<double> own(n * steps, 0.0), usual(n * steps, 0.0);
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const size_t kind = t.model.graph.is_comm(v) ? 1 : 0;
      for (size_t i = 0; i < inst; ++i) {
        const size_t k =
            (2 * cells.IndexOf(i, v) + kind) * steps + cells.StepOf(i);
        own[k] += t.cost[t.Slot(v, i)];
        usual[k] += typical[t.Slot(v, i)];
      }
    }
    std::vector<double> out(n, 1.0);
    slow->assign(cells.all().size(), 0);
    for (size_t k = 0; k < n; ++k) {
      double o = 0, u = 0, sum = 0, sum2 = 0, count = 0;
      for (size_t s = 0; s < steps; ++s) {
        o += own[k * steps + s];
        u += usual[k * steps + s];
        if (usual[k * steps + s] > 0) {
          const double r = own[k * steps + s] / usual[k * steps + s];
          sum += r;
          sum2 += r * r;
          count += 1;
        }
      }
      if (!(u > 0)) continue;
      out[k] = std::max(1.0, o / u);
      const double mean = count > 0 ? sum / count : 1;
      const double var =
          count > 1 ? std::max(0.0, (sum2 - count * mean * mean) / (count - 1))
                    : 0;
      const double se = count > 0 ? std::sqrt(var / count) : 0;
      const double bar = k % 2 == 0 ? kSlowCompute : kSlowLink;
      if (out[k] >= bar && out[k] - 1 > 3 * se) (*slow)[k / 2] = 1;
    }
    return out;
  }

  // A worker this much slower than its peers is worth replacing: compute
  // 5% (a slow GPU), communication 50% (a slow link; transfer times vary
  // far more from op to op).
  static constexpr double kSlowCompute = 1.05;
  static constexpr double kSlowLink = 1.5;

  static Proposal Replace(const JobView& job, const Cells& cells,
                          const std::set<int32_t>& nodes,
                          const std::vector<double>& slowness) {
    const whatif::PreparedTrace& t = job.trace;
    const std::vector<Cell>& all = cells.all();
    std::set<int32_t> ranks;
    double worst = 1;
    for (size_t c = 0; c < all.size(); ++c) {
      if (nodes.count(all[c].place.node) == 0) continue;
      ranks.insert(all[c].place.rank);
      worst = std::max({worst, slowness[2 * c], slowness[2 * c + 1]});
    }
    Proposal p;
    Rewrite& rw = p.rewrite;
    rw.cost.assign(t.cost.begin(), t.cost.end());
    const size_t inst = t.num_instances();
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const size_t kind = t.model.graph.is_comm(v) ? 1 : 0;
      for (size_t i = 0; i < inst; ++i) {
        const size_t c = cells.IndexOf(i, v);
        if (nodes.count(all[c].place.node) == 0) continue;
        rw.cost[t.Slot(v, i)] /= slowness[2 * c + kind];
      }
    }
    const int32_t gpn = job.econ.gpus_per_node;
    std::string what;
    if (nodes.size() == 1) {
      const int32_t node = *nodes.begin();
      const std::string host = t.topology.HostOf(node);
      what = StrFormat(
          "%s (%s)",
          host.empty() ? StrFormat("node %d", node).c_str()
                       : ("host " + host).c_str(),
          t.layout == whatif::Layout::kMegatron && host.empty()
              ? StrFormat("ranks %d-%d", node * gpn, node * gpn + gpn - 1)
                    .c_str()
              : RankRanges(ranks).c_str());
      p.params = StrFormat("node=%d", node);
    } else {
      std::string list;
      size_t shown = 0;
      for (int32_t n : nodes) {
        if (shown++ == 8) {
          list += ", ...";
          break;
        }
        list += (list.empty() ? "" : ", ") + std::to_string(n);
      }
      what = StrFormat("%zu nodes (%s)", nodes.size(), list.c_str());
      p.params = StrFormat("nodes=%zu", nodes.size());
    }
    p.action =
        "replace " + what + " with spares and restart from the last checkpoint";
    const whatif::Counterfactual& mw = job.result.fix_worst_workers;
    p.evidence = StrFormat(
        "rank %d is the worst worker (score %.3f); the replaced workers' ops "
        "take up to %.2fx a typical peer's; fixing the worst %zu worker(s) "
        "recovers M_W = %.2f of the slowdown",
        job.result.workers.front().rank, job.result.workers.front().score,
        worst, mw.ranks.size(), mw.rem);
    p.effects.restart = true;
    p.effects.downtime_s =
        job.econ.restart_s + 0.5 * job.econ.checkpoint_interval_s;
    p.effects.semantics = Semantics::kIdentical;
    if (job.diagnosis.persistence_known && !job.diagnosis.persistent) {
      p.effects.caveat =
          "the slowdown is transient: a replacement pays only if it lasts "
          "past the break-even time";
    }
    return p;
  }
};

}  // namespace

std::unique_ptr<Policy> NewEvictNode() { return std::make_unique<EvictNode>(); }

}  // namespace strag::mitigate
