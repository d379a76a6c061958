// SPDX-License-Identifier: Apache-2.0
// Step structure: whether two steps have the same nodes and collectives, so
// that one graph describes both.
//
// A rank's nodes in two steps are the same when they agree one by one (in
// BuildLocalNodes order) on type, stream, launch position and, for comm
// nodes, the trace's group and peer. Two steps' matchings are the same when
// they list the same members in the same order.

#ifndef STRAG_SRC_GRAPH_GENERIC_STEP_STRUCTURE_H_
#define STRAG_SRC_GRAPH_GENERIC_STEP_STRUCTURE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "graph/generic/collective_matching.h"
#include "graph/generic/segments.h"
#include "trace/rank_trace.h"

namespace strag::graph {

// nullopt when `step` has the nodes of `reference` (both of rank `trace`);
// else what differs, e.g. "14 nodes (8 compute, 6 all-reduce) instead of 15
// (8 compute, 7 all-reduce)" or "node 5 is all-reduce #2 on stream 20 instead
// of compute #3 on stream 7".
std::optional<std::string> RankStructureDiff(
    const trace::RankTrace& trace, std::span<const LocalNode> reference,
    std::span<const LocalNode> step);

// nullopt when both matchings pair the same nodes; else the first comm that
// differs ("all-reduce #3 of group '0'").
std::optional<std::string> MatchingDiff(std::span<const MatchedComm> reference,
                                        std::span<const MatchedComm> step);

// A hash of one step's structure (every rank's nodes and the matching):
// equal structures hash equal.
uint64_t StructureHash(std::span<const trace::RankTrace* const> traces,
                       std::span<const std::vector<LocalNode>> nodes,
                       std::span<const MatchedComm> matching);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_STEP_STRUCTURE_H_
