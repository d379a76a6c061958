// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/generic_graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "graph/disjoint_sets.h"
#include "graph/generic/rank_edges.h"

namespace strag::graph {
namespace {

class GraphBuilder {
 public:
  GraphBuilder(const GraphInput& in, GenericModel* model, WarningLog* log)
      : in_(in), model_(*model), log_(*log) {}
  Status Build();

 private:
  void AddNodes();
  void AddRankEdges(size_t r);
  void AddWaitsOfOtherSteps(size_t r);
  Status AddGroups();
  void FindSinks();
  void FindDetached();
  NodeId Id(size_t r, uint32_t local) const {
    return static_cast<NodeId>(base_[r] + local);
  }

  const GraphInput& in_;
  GenericModel& model_;
  WarningLog& log_;
  std::vector<size_t> base_;  // per rank: its first NodeId
  std::vector<std::pair<NodeId, NodeId>> edges_;
};

void GraphBuilder::AddNodes() {
  for (size_t r = 0; r < in_.nodes.size(); ++r) {
    base_.push_back(model_.nodes.size());
    for (const LocalNode& n : in_.nodes[r]) {
      model_.nodes.push_back(
          GenericNode{static_cast<int32_t>(r), n.type, n.seq, n.stream});
    }
  }
  model_.graph = DepGraph(model_.nodes.size());
}

// The rank's edges; an edge its own times contradict is kept (the model says
// so) but counted and named: overlapping ops on one stream are bad input.
void GraphBuilder::AddRankEdges(size_t r) {
  const auto& nodes = in_.nodes[r];
  for (const LocalEdge& e : BuildRankEdges(nodes, in_.wait_tolerance_ns)) {
    const NodeId u = Id(r, e.from), v = Id(r, e.to);
    model_.graph.AddEdge(u, v);
    edges_.push_back({u, v});
    const int64_t late = nodes[e.from].end_ns - nodes[e.to].start_ns;
    if (late > 0 && e.kind != EdgeKind::kIssue) {
      ++model_.counters.edge_violations;
      log_.Add("edge-violation",
               DescribeNode(model_, u) + " ends " + std::to_string(late) +
                   " ns after " + DescribeNode(model_, v) +
                   " starts, which depends on it (ops overlap on one "
                   "stream?)");
    }
  }
  AddWaitsOfOtherSteps(r);
}

void GraphBuilder::AddWaitsOfOtherSteps(size_t r) {
  std::set<std::pair<uint32_t, uint32_t>> waits;
  for (const auto& step : in_.other_steps) {
    for (const LocalEdge& e : BuildRankEdges(step[r], in_.wait_tolerance_ns)) {
      if (e.kind == EdgeKind::kWait) waits.insert({e.from, e.to});
    }
  }
  auto holds = [&](const std::vector<LocalNode>& nodes, uint32_t u,
                   uint32_t v) { return nodes[u].end_ns <= nodes[v].start_ns; };
  for (const auto& [from, to] : waits) {
    bool ok = holds(in_.nodes[r], from, to);
    for (const auto& step : in_.other_steps) ok = ok && holds(step[r], from, to);
    if (!ok) continue;
    model_.graph.AddEdge(Id(r, from), Id(r, to));  // duplicates are merged
    edges_.push_back({Id(r, from), Id(r, to)});
  }
}

Status GraphBuilder::AddGroups() {
  for (const MatchedComm& m : in_.matching) {
    std::vector<NodeId> members;
    for (const auto& [r, v] : m.members) {
      members.push_back(Id(static_cast<size_t>(r), v));
    }
    RETURN_IF_ERROR(model_.graph.AddGroup(std::move(members), false));
  }
  model_.counters.collectives = static_cast<int64_t>(in_.matching.size());
  return Status::Ok();
}

// The last node (by start) of every stream of every rank.
void GraphBuilder::FindSinks() {
  for (size_t r = 0; r < in_.nodes.size(); ++r) {
    const auto& nodes = in_.nodes[r];
    std::map<int32_t, uint32_t> last;  // stream -> node
    for (uint32_t v = 0; v < nodes.size(); ++v) {
      auto [it, inserted] = last.emplace(nodes[v].stream, v);
      const LocalNode& cur = nodes[it->second];
      if (!inserted && std::tie(nodes[v].start_ns, nodes[v].position) >
                           std::tie(cur.start_ns, cur.position)) {
        it->second = v;
      }
    }
    for (const auto& [stream, v] : last) model_.sink_nodes.push_back(Id(r, v));
  }
  std::sort(model_.sink_nodes.begin(), model_.sink_nodes.end());
}

// Nodes outside the largest connected part (edges and groups).
void GraphBuilder::FindDetached() {
  const size_t n = model_.nodes.size();
  DisjointSets sets(n);
  for (const auto& [u, v] : edges_) sets.Union(u, v);
  for (const CommGroup& g : model_.graph.groups()) {
    for (NodeId m : g.members) sets.Union(m, g.members.front());
  }
  std::vector<uint32_t> size(n, 0);
  for (NodeId v = 0; v < n; ++v) ++size[sets.Find(v)];
  uint32_t main = sets.Find(0);
  for (NodeId v = 0; v < n; ++v) {
    if (size[sets.Find(v)] > size[main]) main = sets.Find(v);
  }
  for (NodeId v = 0; v < n; ++v) {
    if (sets.Find(v) != main) model_.detached_nodes.push_back(v);
  }
  model_.counters.detached_nodes =
      static_cast<int64_t>(model_.detached_nodes.size());
  for (NodeId v : model_.detached_nodes) {
    log_.Add("detached", DescribeNode(model_, v) +
                             " shares no dependency or collective with the "
                             "rest of the step (replayed on its own)");
  }
}

Status GraphBuilder::Build() {
  AddNodes();
  if (model_.nodes.empty()) return InvalidInput("the step has no ops");
  for (size_t r = 0; r < in_.nodes.size(); ++r) AddRankEdges(r);
  RETURN_IF_ERROR(AddGroups());
  FindSinks();
  FindDetached();
  return model_.graph.Finalize(
      [this](NodeId v) { return DescribeNode(model_, v); },
      model_.detached_nodes);
}

}  // namespace

Status BuildGenericGraph(const GraphInput& in, GenericModel* model,
                         WarningLog* log) {
  return GraphBuilder(in, model, log).Build();
}

}  // namespace strag::graph
