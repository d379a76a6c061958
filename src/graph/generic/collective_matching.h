// SPDX-License-Identifier: Apache-2.0
// Collective matching: which comm nodes of different ranks are one
// collective (or one send/recv pair) in a step.
//
// A collective is identified by its process group and its sequence number
// (CommOp::seq) or, when the group's ops carry none, by its order among the
// ops of that group and kind on the rank (the k-th all-reduce of group G on
// every member). Groups are merged over the ranks' traces by name and rank
// list; an op whose group is unknown belongs to the default group of all
// ranks. Members = the group's rank list (or, for a named group without one,
// the ranks seen using it). A send on rank a to peer b pairs with the recv
// on rank b from peer a, in order per (a, b). What does not match is kept
// as a comm of the members present, with the missing ranks named.

#ifndef STRAG_SRC_GRAPH_GENERIC_COLLECTIVE_MATCHING_H_
#define STRAG_SRC_GRAPH_GENERIC_COLLECTIVE_MATCHING_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "graph/generic/group_catalog.h"
#include "graph/generic/segments.h"
#include "trace/rank_trace.h"

namespace strag::graph {

struct MatchedComm {
  trace::OpType kind = trace::OpType::kOtherComm;
  std::string what;    // "all-reduce seq 12 of group '0'", for messages
  int32_t group = -1;  // catalog id; -1 for a send / recv pair
  // (rank index, index into that rank's nodes), by rank index.
  std::vector<std::pair<int32_t, uint32_t>> members;
  std::vector<int32_t> missing;  // rank indices that should have joined
  std::vector<int32_t> absent;   // global ranks that should, without a trace
};

// Matches the comm nodes of one step (`nodes` per rank index, built from
// `traces`). Every comm node ends up in exactly one MatchedComm; the list is
// ordered by its first member. `duplicates` counts ops whose identity was
// already taken on their rank (kept on their own).
std::vector<MatchedComm> MatchStep(
    const GroupCatalog& catalog,
    std::span<const trace::RankTrace* const> traces,
    std::span<const int32_t> ranks,
    std::span<const std::vector<LocalNode>> nodes, int64_t* duplicates);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_COLLECTIVE_MATCHING_H_
