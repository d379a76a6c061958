// SPDX-License-Identifier: Apache-2.0
#include "graph/dep_graph.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "graph/disjoint_sets.h"

namespace strag::graph {

Status DepGraph::AddGroup(std::vector<NodeId> members, bool dp_sync) {
  const auto id = static_cast<int32_t>(groups_.size());
  for (NodeId m : members) {
    if (group_of_[m] != kNoGroup) {
      return Internal("node " + std::to_string(m) + " is in two comm groups");
    }
    group_of_[m] = id;
  }
  groups_.push_back(CommGroup{std::move(members), dp_sync});
  return Status::Ok();
}

Status DepGraph::Finalize(const std::function<std::string(NodeId)>& describe,
                          std::span<const NodeId> may_be_detached) {
  const size_t n = num_nodes();
  dep_offsets_.assign(n + 1, 0);
  dep_list_.clear();
  for (NodeId v = 0; v < n; ++v) {
    auto& d = deps_[v];
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    dep_list_.insert(dep_list_.end(), d.begin(), d.end());
    dep_offsets_[v + 1] = static_cast<uint32_t>(dep_list_.size());
  }
  deps_.clear();
  deps_.shrink_to_fit();

  // Units: plain nodes keep their id; group g is unit n + g.
  const size_t num_units = n + groups_.size();
  auto unit_of = [&](NodeId v) -> uint32_t {
    return group_of_[v] == kNoGroup
               ? v
               : static_cast<uint32_t>(n + static_cast<size_t>(group_of_[v]));
  };
  std::vector<std::vector<uint32_t>> succ(num_units);
  std::vector<uint32_t> indegree(num_units, 0);
  for (NodeId v = 0; v < n; ++v) {
    for (const uint32_t* u = dep_begin(v); u != dep_end(v); ++u) {
      const uint32_t from = unit_of(*u), to = unit_of(v);
      if (from == to) {
        return InvalidInput("dependency cycle: " + describe(v) +
                            " depends on " + describe(*u) +
                            ", a member of its own comm group");
      }
      succ[from].push_back(to);
      ++indegree[to];
    }
  }
  // Kahn's algorithm with a stack of ready units: a deterministic order.
  std::vector<uint32_t> ready;
  for (uint32_t u = 0; u < num_units; ++u) {
    if (indegree[u] == 0 && (u >= n || group_of_[u] == kNoGroup)) {
      ready.push_back(u);
    }
  }
  std::reverse(ready.begin(), ready.end());
  schedule_.clear();
  schedule_.reserve(num_units);
  while (!ready.empty()) {
    const uint32_t u = ready.back();
    ready.pop_back();
    schedule_.push_back(u < n
                            ? ScheduleUnit{false, u}
                            : ScheduleUnit{true, static_cast<uint32_t>(u - n)});
    for (uint32_t s : succ[u]) {
      if (--indegree[s] == 0) ready.push_back(s);
    }
  }
  size_t expected_units = groups_.size();
  for (NodeId v = 0; v < n; ++v) expected_units += group_of_[v] == kNoGroup;
  if (schedule_.size() != expected_units) {
    for (NodeId v = 0; v < n; ++v) {
      if (indegree[unit_of(v)] > 0) {
        return InvalidInput("dependency cycle through " + describe(v) + " (" +
                            std::to_string(expected_units - schedule_.size()) +
                            " ops or groups cannot be ordered)");
      }
    }
    return InvalidInput("dependency cycle");
  }
  return CheckConnected(describe, may_be_detached);
}

Status DepGraph::CheckConnected(
    const std::function<std::string(NodeId)>& describe,
    std::span<const NodeId> may_be_detached) {
  const size_t n = num_nodes();
  std::vector<uint8_t> exempt(n, 0);
  for (NodeId v : may_be_detached) exempt[v] = 1;
  DisjointSets sets(n);
  for (NodeId v = 0; v < n; ++v) {
    for (const uint32_t* u = dep_begin(v); u != dep_end(v); ++u) {
      sets.Union(*u, v);
    }
  }
  for (const CommGroup& g : groups_) {
    for (NodeId m : g.members) sets.Union(m, g.members.front());
  }
  NodeId anchor = 0;
  while (anchor < n && exempt[anchor]) ++anchor;
  for (NodeId v = anchor + 1; v < n; ++v) {
    if (!exempt[v] && sets.Find(v) != sets.Find(anchor)) {
      return InvalidInput("dependency graph is not connected: " + describe(v) +
                          " has no path to " + describe(anchor));
    }
  }
  return Status::Ok();
}

}  // namespace strag::graph
