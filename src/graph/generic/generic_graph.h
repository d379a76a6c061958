// SPDX-License-Identifier: Apache-2.0
// Generic graph: the DepGraph of the generic model, from the reference step.
//
// NodeIds run rank by rank (rank index order), each rank's nodes in
// BuildLocalNodes order. Edges come from BuildRankEdges; each matched
// collective or send/recv pair (or a lone comm) is one comm group
// (dp_sync = false). Every edge is checked against the reference step's
// times (u must end by the time v starts); nodes outside the main connected
// part (a side stream nothing waits on) are listed as detached and exempt
// from DepGraph's connectivity check, with a warning.

#ifndef STRAG_SRC_GRAPH_GENERIC_GENERIC_GRAPH_H_
#define STRAG_SRC_GRAPH_GENERIC_GENERIC_GRAPH_H_

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "graph/generic/collective_matching.h"
#include "graph/generic/generic_model.h"
#include "graph/generic/segments.h"
#include "graph/generic/warning_log.h"

namespace strag::graph {

struct GraphInput {
  std::span<const int32_t> ranks;                 // rank index -> global rank
  std::span<const std::vector<LocalNode>> nodes;  // reference step, per rank
  std::span<const MatchedComm> matching;          // reference step
  int64_t wait_tolerance_ns = 0;
  // The other kept steps (same structure), per step the nodes per rank: a
  // wait seen in any step is an edge when no step contradicts it (a
  // collective that happened to end early in the reference step still
  // gates what waits for it in the others).
  std::vector<std::span<const std::vector<LocalNode>>> other_steps;
};

// Fills model->nodes, graph (finalized), sink_nodes, detached_nodes and the
// collectives / edge_violations / detached_nodes counters.
Status BuildGenericGraph(const GraphInput& in, GenericModel* model,
                         WarningLog* log);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_GENERIC_GRAPH_H_
