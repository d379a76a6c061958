// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/p2p_peers.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "graph/generic/segments.h"
#include "graph/generic/step_split.h"

namespace strag::graph {
namespace {

using trace::OpType;

bool IsSendOrRecv(OpType t) { return t == OpType::kSend || t == OpType::kRecv; }

double MeanDur(const GenericModel& m, NodeId v) {
  double sum = 0;
  for (size_t s = 0; s < m.steps.size(); ++s) {
    sum += static_cast<double>(m.dur(v, s));
  }
  return m.steps.empty() ? 0 : sum / static_cast<double>(m.steps.size());
}

// Which of a middle stage's p2p-adjacent computes (in program order, with
// their mean durations) are forwards. A pipeline schedule runs m forwards
// and m backwards: w forwards of warm-up, m - w (forward, backward) pairs,
// then w backwards (w = m: GPipe; w = stages after this one: 1F1B). The w
// whose forwards are the shortest (backwards about twice as long) wins;
// with an odd count, the shorter half are forwards.
std::map<NodeId, bool> ForwardComputes(
    const std::vector<std::pair<double, NodeId>>& computes) {
  std::map<NodeId, bool> forward;
  const size_t n = computes.size();
  if (n % 2 == 0) {
    const size_t m = n / 2;
    size_t best_w = m;
    double best = -1e300;
    for (size_t w = 0; w <= m; ++w) {
      double score = 0;  // backward time - forward time
      for (size_t k = 0; k < n; ++k) {
        const bool f = k < w || (k < n - w && (k - w) % 2 == 0);
        score += f ? -computes[k].first : computes[k].first;
      }
      if (score > best) best = score, best_w = w;
    }
    for (size_t k = 0; k < n; ++k) {
      forward[computes[k].second] =
          k < best_w || (k < n - best_w && (k - best_w) % 2 == 0);
    }
    return forward;
  }
  std::vector<std::pair<double, NodeId>> by_time = computes;
  std::sort(by_time.begin(), by_time.end());
  for (size_t k = 0; k < n; ++k) forward[by_time[k].second] = 2 * k < n;
  return forward;
}

// (type, seq) of each p2p node of rank index r -> +1 (next stage) or -1.
std::map<std::pair<OpType, int32_t>, int> Directions(const GenericModel& m,
                                                     int32_t r, int32_t stage,
                                                     int32_t pp) {
  std::vector<NodeId> mine;  // in the rank's node order
  for (NodeId v = 0; v < m.nodes.size(); ++v) {
    if (m.nodes[v].rank_index == r) mine.push_back(v);
  }
  std::map<std::pair<OpType, int32_t>, int> out;
  if (stage == 0 || stage == pp - 1) {  // one neighbour
    for (NodeId v : mine) {
      if (IsSendOrRecv(m.nodes[v].type)) {
        out[{m.nodes[v].type, m.nodes[v].seq}] = stage == 0 ? 1 : -1;
      }
    }
    return out;
  }
  // The compute each p2p op feeds (recv: the next one) or follows (send:
  // the one before), and which computes are the shorter half (forwards).
  std::map<NodeId, NodeId> compute_of;
  std::vector<std::pair<double, NodeId>> computes;
  for (size_t i = 0; i < mine.size(); ++i) {
    const GenericNode& n = m.nodes[mine[i]];
    if (!IsSendOrRecv(n.type)) continue;
    const bool recv = n.type == OpType::kRecv;
    for (size_t j = i; recv ? j + 1 < mine.size() : j > 0;) {
      j = recv ? j + 1 : j - 1;
      if (m.nodes[mine[j]].type == OpType::kCompute) {
        compute_of[mine[i]] = mine[j];
        computes.push_back({MeanDur(m, mine[j]), mine[j]});
        break;
      }
    }
  }
  std::sort(computes.begin(), computes.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  computes.erase(std::unique(computes.begin(), computes.end()), computes.end());
  const std::map<NodeId, bool> forward = ForwardComputes(computes);
  for (const auto& [v, c] : compute_of) {
    const bool recv = m.nodes[v].type == OpType::kRecv;
    // Recv before a forward: from the previous stage; send after a
    // forward: to the next.
    out[{m.nodes[v].type, m.nodes[v].seq}] = forward.at(c) == recv ? -1 : 1;
  }
  return out;
}

}  // namespace

int64_t AssignPipelinePeers(const GenericModel& m,
                            const trace::Topology& topology,
                            std::vector<trace::RankTrace>* traces) {
  if (topology.pp < 2 || topology.places.size() != m.ranks.size()) return 0;
  std::map<std::pair<int32_t, int32_t>, int32_t> rank_at;  // (pp, dp) -> rank
  for (const trace::RankPlace& p : topology.places)
    rank_at[{p.pp, p.dp}] = p.rank;
  std::map<int32_t, size_t> index;
  for (size_t i = 0; i < m.ranks.size(); ++i) index[m.ranks[i]] = i;
  int64_t assigned = 0;
  for (trace::RankTrace& t : *traces) {
    const auto it = index.find(t.rank);
    if (it == index.end()) continue;
    const trace::RankPlace& place = topology.places[it->second];
    const auto dir =
        Directions(m, static_cast<int32_t>(it->second), place.pp, topology.pp);
    const RankSteps steps = SplitSteps(t);
    for (const std::vector<uint32_t>& rows : steps.rows) {
      for (const LocalNode& n : BuildLocalNodes(t, rows)) {
        if (!IsSendOrRecv(n.type) || n.comm < 0) continue;
        trace::CommOp& op = t.comms[static_cast<size_t>(n.comm)];
        const auto d = dir.find({n.type, n.seq});
        if (op.peer >= 0 || d == dir.end()) continue;
        const auto peer = rank_at.find({place.pp + d->second, place.dp});
        if (peer == rank_at.end()) continue;
        op.peer = peer->second;
        ++assigned;
      }
    }
  }
  return assigned;
}

}  // namespace strag::graph
