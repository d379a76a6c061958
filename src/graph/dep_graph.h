// SPDX-License-Identifier: Apache-2.0
// DepGraph: the per-instance dependency graph the replay engine executes.
//
// Nodes are ops of one instance (one DP replica in one step, see
// whatif-spec.md §2.2); the same graph is applied to every instance. An edge
// u -> v means "v may not start before u ends". A comm group is a rendezvous:
// no member transfers before every member has started; each member then ends
// at max(member starts) + its own transfer time. A `dp_sync` group also waits
// for the same group in every other DP replica of the step.

#ifndef STRAG_SRC_GRAPH_DEP_GRAPH_H_
#define STRAG_SRC_GRAPH_DEP_GRAPH_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/status.h"

namespace strag::graph {

using NodeId = uint32_t;   // index into the graph's nodes
using GroupId = uint32_t;  // index into DepGraph::groups
inline constexpr int32_t kNoGroup = -1;

struct CommGroup {
  std::vector<NodeId> members;
  bool dp_sync = false;  // also synchronises across the DP replicas of a step
};

// One step of the replay schedule: a plain node or a whole comm group.
struct ScheduleUnit {
  bool is_group = false;
  uint32_t id = 0;  // NodeId, or GroupId when is_group
};

class DepGraph {
 public:
  explicit DepGraph(size_t num_nodes)
      : deps_(num_nodes), group_of_(num_nodes, kNoGroup) {}

  size_t num_nodes() const { return group_of_.size(); }

  // Adds u -> v (v depends on u). Duplicate edges are ignored by Finalize.
  // Only before Finalize.
  void AddEdge(NodeId u, NodeId v) {
    STRAG_CHECK(v < deps_.size(), "AddEdge after Finalize");
    deps_[v].push_back(u);
  }
  // Adds a comm group; every member must belong to at most one group.
  Status AddGroup(std::vector<NodeId> members, bool dp_sync);

  // Sorts and de-duplicates the dependency lists, flattens them into CSR and
  // computes the topological schedule over the graph in which each comm group
  // is one node. Fails (kInvalidInput) when that graph has a cycle or is not
  // connected (nodes in `may_be_detached`, such as profiler no-ops, are
  // exempt); `describe` names a node in the message.
  Status Finalize(const std::function<std::string(NodeId)>& describe,
                  std::span<const NodeId> may_be_detached = {});

  // Valid after Finalize.
  const uint32_t* dep_begin(NodeId v) const {
    return dep_list_.data() + dep_offsets_[v];
  }
  const uint32_t* dep_end(NodeId v) const {
    return dep_list_.data() + dep_offsets_[v + 1];
  }
  size_t num_deps(NodeId v) const {
    return dep_offsets_[v + 1] - dep_offsets_[v];
  }
  size_t num_edges() const { return dep_list_.size(); }
  int32_t group_of(NodeId v) const { return group_of_[v]; }
  bool is_comm(NodeId v) const { return group_of_[v] != kNoGroup; }
  const std::vector<CommGroup>& groups() const { return groups_; }
  const std::vector<ScheduleUnit>& schedule() const { return schedule_; }

 private:
  Status CheckConnected(const std::function<std::string(NodeId)>& describe,
                        std::span<const NodeId> may_be_detached);

  std::vector<std::vector<NodeId>> deps_;  // until Finalize
  std::vector<int32_t> group_of_;
  std::vector<CommGroup> groups_;
  std::vector<uint32_t> dep_offsets_;
  std::vector<NodeId> dep_list_;
  std::vector<ScheduleUnit> schedule_;
};

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_DEP_GRAPH_H_
