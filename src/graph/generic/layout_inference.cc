// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/layout_inference.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "graph/disjoint_sets.h"

namespace strag::graph {
namespace {

using trace::OpType;
using trace::Topology;

bool IsSendOrRecv(OpType t) { return t == OpType::kSend || t == OpType::kRecv; }

// Each rank its own DP replica, one stage.
Topology DataParallel(const GenericModel& m, int32_t gpus_per_node,
                      std::string source, bool known) {
  Topology t;
  t.dp = static_cast<int32_t>(m.ranks.size());
  t.source = std::move(source);
  t.known = known;
  for (size_t i = 0; i < m.ranks.size(); ++i) {
    t.places.push_back({m.ranks[i], static_cast<int32_t>(i), 0, 0, 0,
                        m.ranks[i] / std::max(1, gpus_per_node)});
  }
  return t;
}

// The layout the flags give, or an empty string and a reason.
std::pair<Topology, std::string> FromFlags(const GenericModel& m,
                                           const LayoutFlags& f) {
  Topology t;
  const int64_t world = std::max<int64_t>(
      f.world_size, m.ranks.empty() ? 0 : int64_t{m.ranks.back()} + 1);
  int64_t dp = f.dp, pp = f.pp;
  // The traces may hold one rank per TP group (tp collapsed), or all.
  for (const int32_t tp : {f.tp, 1}) {
    const int64_t per = int64_t{tp} * f.cp;
    if (dp == 0 && pp > 0 && world % (pp * per) == 0) dp = world / (pp * per);
    if (pp == 0 && dp > 0 && world % (dp * per) == 0) pp = world / (dp * per);
    if (dp > 0 && pp > 0 && dp * pp * per == world) {
      t.dp = static_cast<int32_t>(dp), t.pp = static_cast<int32_t>(pp);
      t.tp = f.tp, t.cp = f.cp;
      for (int32_t r : m.ranks) {
        t.places.push_back(
            trace::PlaceOfRank(r, t.dp, tp, f.cp, f.gpus_per_node));
      }
      t.source = "flags: DP " + std::to_string(dp) + " x PP " +
                 std::to_string(pp) +
                 (tp > 1 ? " x TP " + std::to_string(tp) : "") +
                 (f.cp > 1 ? " x CP " + std::to_string(f.cp) : "") +
                 (tp != f.tp ? " (one traced rank per TP group)" : "");
      t.known = true;
      return {t, ""};
    }
    dp = f.dp, pp = f.pp;
  }
  return {t, "the flags' layout (dp " + std::to_string(f.dp) + ", pp " +
                 std::to_string(f.pp) + ", tp " + std::to_string(f.tp) +
                 ", cp " + std::to_string(f.cp) +
                 ") does not fit the traces' world of " +
                 std::to_string(world) + " ranks: layout inferred instead"};
}

// Pipelines from the matched send/recv pairs; empty places when the p2p
// pairs do not form equal chains (the reason in `why`).
Topology FromP2pChains(const GenericModel& m, int32_t gpus_per_node,
                       std::string* why) {
  const size_t n = m.ranks.size();
  const size_t ref = static_cast<size_t>(
      std::find(m.steps.begin(), m.steps.end(), m.reference_step) -
      m.steps.begin());
  std::vector<std::set<int32_t>> next(n);
  // The receiver of each rank's first send in the reference step.
  std::vector<std::pair<int64_t, int32_t>> first_send(
      n, {std::numeric_limits<int64_t>::max(), -1});
  for (const CommGroup& g : m.graph.groups()) {
    if (g.members.size() != 2) continue;
    const GenericNode& a = m.nodes[g.members[0]];
    const GenericNode& b = m.nodes[g.members[1]];
    if (!IsSendOrRecv(a.type) || !IsSendOrRecv(b.type) ||
        a.rank_index == b.rank_index) {
      continue;
    }
    next[static_cast<size_t>(a.rank_index)].insert(b.rank_index);
    next[static_cast<size_t>(b.rank_index)].insert(a.rank_index);
    const bool a_sends = a.type == OpType::kSend;
    const NodeId sender = a_sends ? g.members[0] : g.members[1];
    const int32_t from = a_sends ? a.rank_index : b.rank_index;
    const int32_t to = a_sends ? b.rank_index : a.rank_index;
    auto& f = first_send[static_cast<size_t>(from)];
    f = std::min(f, std::pair{m.start(sender, ref), to});
  }
  Topology t;
  if (std::all_of(next.begin(), next.end(),
                  [](const auto& s) { return s.empty(); })) {
    return t;
  }
  // The first p2p op of each rank in the reference step: a send or a recv.
  std::vector<std::pair<int64_t, OpType>> first(
      n, {std::numeric_limits<int64_t>::max(), OpType::kRecv});
  for (NodeId v = 0; v < m.nodes.size(); ++v) {
    const GenericNode& node = m.nodes[v];
    if (!IsSendOrRecv(node.type)) continue;
    auto& f = first[static_cast<size_t>(node.rank_index)];
    f = std::min(f, std::pair{m.start(v, ref), node.type});
  }
  DisjointSets sets(n);
  for (size_t r = 0; r < n; ++r) {
    if (next[r].size() > 2) {
      *why = "rank " + std::to_string(m.ranks[r]) + " exchanges p2p with " +
             std::to_string(next[r].size()) + " ranks: not a pipeline chain";
      return t;
    }
    for (int32_t q : next[r]) {
      sets.Union(static_cast<uint32_t>(r), static_cast<uint32_t>(q));
    }
  }
  std::map<uint32_t, std::vector<int32_t>> chains;  // root -> rank indices
  for (size_t r = 0; r < n; ++r) {
    chains[sets.Find(static_cast<uint32_t>(r))].push_back(
        static_cast<int32_t>(r));
  }
  std::vector<int32_t> stage(n, -1);
  size_t length = 0;
  for (const auto& [root, members] : chains) {
    std::vector<int32_t> ends;
    for (int32_t r : members) {
      if (next[static_cast<size_t>(r)].size() < 2) ends.push_back(r);
    }
    // An interleaved pipeline (virtual stages) is a ring: the last stage
    // sends the next chunk's activations to the first.
    const bool ring = ends.empty() && members.size() >= 3;
    if (members.size() < 2 || (ends.size() != 2 && !ring)) {
      *why = "rank " +
             std::to_string(m.ranks[static_cast<size_t>(members.front())]) +
             (members.size() < 2 ? " has no pipeline neighbour"
                                 : " has p2p that form no chain or ring");
      return {};
    }
    if (length != 0 && members.size() != length) {
      *why = "pipelines of " + std::to_string(length) + " and " +
             std::to_string(members.size()) + " ranks";
      return {};
    }
    length = members.size();
    // Stage 0 starts its p2p with a send; on a tie, the lower rank.
    auto starts_with_send = [&](int32_t r) {
      return first[static_cast<size_t>(r)].second == OpType::kSend;
    };
    int32_t head = ring ? members.front() : ends[0];
    if (ring) {
      std::vector<int32_t> senders;
      for (int32_t r : members) {
        if (starts_with_send(r)) senders.push_back(r);
      }
      if (senders.size() == 1) head = senders.front();
    } else if (starts_with_send(ends[1]) && !starts_with_send(ends[0])) {
      head = ends[1];
    }
    // Around a ring, stage 1 is where stage 0 sends first.
    int32_t prev = -1;
    if (ring) {
      const int32_t to = first_send[static_cast<size_t>(head)].second;
      const auto& around = next[static_cast<size_t>(head)];
      const int32_t second = around.count(to) ? to : *around.begin();
      for (int32_t q : around) {
        if (q != second) prev = q;
      }
    }
    for (int32_t cur = head, s = 0;
         cur >= 0 && stage[static_cast<size_t>(cur)] < 0; ++s) {
      stage[static_cast<size_t>(cur)] = s;
      int32_t step = -1;
      for (int32_t q : next[static_cast<size_t>(cur)]) {
        if (q != prev) step = q;
      }
      prev = cur, cur = step;
    }
  }
  t.pp = static_cast<int32_t>(length);
  t.dp = static_cast<int32_t>(chains.size());
  std::vector<int32_t> seen(length, 0);  // ranks of each stage so far
  for (size_t r = 0; r < n; ++r) {       // rank indices ascend with global rank
    const int32_t s = stage[r];
    t.places.push_back({m.ranks[r], seen[static_cast<size_t>(s)]++, s, 0, 0,
                        m.ranks[r] / std::max(1, gpus_per_node)});
  }
  t.source = "p2p chains: " + std::to_string(t.dp) + " pipeline(s) of " +
             std::to_string(t.pp) + " stages";
  t.known = true;
  return t;
}

bool HasP2p(const GenericModel& m) {
  return std::any_of(m.nodes.begin(), m.nodes.end(),
                     [](const GenericNode& n) { return IsSendOrRecv(n.type); });
}

// Stages from the ranks' point-to-point signatures, when no send could be
// paired with its recv (torch 1.13's gloo send/recv name no peer): ranks
// whose step has the same sequence of sends and recvs run the same stage
// program (DP replicas of a stage; two middle stages of one shape share a
// signature too, which names them one stage of two replicas). Stage 0 is
// the signature that starts with a send, the last one the other end (half
// the p2p ops, starting with a recv); the order of middle stages is that of
// their ranks. Empty when the ranks have no p2p or the groups differ in size.
Topology FromP2pSignatures(const GenericModel& m, int32_t gpus_per_node) {
  const size_t n = m.ranks.size();
  std::vector<std::string> signature(n);
  for (NodeId v = 0; v < m.nodes.size(); ++v) {  // nodes: per rank, in order
    const GenericNode& node = m.nodes[v];
    if (IsSendOrRecv(node.type)) {
      signature[static_cast<size_t>(node.rank_index)] +=
          node.type == OpType::kSend ? 'S' : 'R';
    }
  }
  std::map<std::string, std::vector<int32_t>> groups;
  size_t longest = 0;
  for (size_t r = 0; r < n; ++r) {
    if (signature[r].empty()) return {};
    groups[signature[r]].push_back(static_cast<int32_t>(r));
    longest = std::max(longest, signature[r].size());
  }
  if (groups.size() < 2) return {};
  // Groups of unequal size (two middle stages of one shape in a pure
  // pipeline): every rank its own stage.
  bool equal = true;
  for (const auto& [sig, members] : groups) {
    equal &= members.size() == groups.begin()->second.size();
  }
  if (!equal) {
    std::map<std::string, std::vector<int32_t>> single;
    for (const auto& [sig, members] : groups) {
      for (int32_t r : members) {
        single[sig + "#" + std::to_string(r)] = {r};
      }
    }
    groups = std::move(single);
  }
  std::vector<std::pair<std::tuple<int, int32_t>, const std::vector<int32_t>*>>
      order;  // (0 first stage, 1 middle, 2 last; first rank) -> group
  for (const auto& [sig, members] : groups) {
    const size_t ops = signature[static_cast<size_t>(members.front())].size();
    const int where = sig.front() == 'S' ? 0 : ops < longest ? 2 : 1;
    order.push_back({{where, members.front()}, &members});
  }
  std::sort(order.begin(), order.end());
  Topology t;
  t.pp = static_cast<int32_t>(order.size());
  t.dp = static_cast<int32_t>(order.front().second->size());
  t.places.resize(n);
  for (size_t s = 0; s < order.size(); ++s) {
    const std::vector<int32_t>& members = *order[s].second;
    for (size_t d = 0; d < members.size(); ++d) {
      const auto r = static_cast<size_t>(members[d]);
      t.places[r] = {m.ranks[r],
                     static_cast<int32_t>(d),
                     static_cast<int32_t>(s),
                     0,
                     0,
                     m.ranks[r] / std::max(1, gpus_per_node)};
    }
  }
  t.source = "p2p signatures (peers unknown): " + std::to_string(t.pp) +
             " stage(s) of " + std::to_string(t.dp) +
             " rank(s), stage 0 the one that sends first";
  t.known = true;
  return t;
}

}  // namespace

InferredLayout InferLayout(const GenericModel& m, const LayoutFlags& flags) {
  InferredLayout out;
  std::string why;
  Topology inferred = FromP2pChains(m, flags.gpus_per_node, &why);
  if (inferred.places.empty() && why.empty()) {
    inferred = FromP2pSignatures(m, flags.gpus_per_node);
    out.peers_unknown = !inferred.places.empty();
  }
  if (inferred.places.empty()) {
    inferred =
        why.empty() && !HasP2p(m)
            ? DataParallel(m, flags.gpus_per_node,
                           "no point-to-point ops: data parallel, "
                           "each rank its own replica",
                           true)
        : why.empty()
            ? DataParallel(m, flags.gpus_per_node,
                           "unknown (point-to-point ops without peers, in no "
                           "stage pattern): each rank its own replica",
                           false)
            : DataParallel(m, flags.gpus_per_node,
                           "unknown (" + why + "): each rank its own replica",
                           false);
  }
  if (flags.dp > 0 || flags.pp > 0) {
    auto [given, problem] = FromFlags(m, flags);
    if (problem.empty()) {
      if (inferred.known && inferred.pp != given.pp) {
        out.warnings.push_back("--pp " + std::to_string(given.pp) +
                               " is used, but the traces' " + inferred.source +
                               " suggest " + std::to_string(inferred.pp) +
                               " stage(s)");
      }
      out.topology = std::move(given);
      return out;
    }
    out.warnings.push_back(problem);
  }
  if (!inferred.known) {
    out.warnings.push_back("layout " + inferred.source +
                           "; give --dp/--pp to name replicas and stages");
  }
  out.topology = std::move(inferred);
  return out;
}

}  // namespace strag::graph
