// SPDX-License-Identifier: Apache-2.0
// Rank edges: the dependencies among the nodes of one rank in one step.
//
//   stream: each node depends on the previous node of its stream (streams
//           are sequences ordered by start).
//   launch (compute -> comm): a comm node c depends, for every other stream,
//           on the latest compute segment of that stream that was launched
//           before c and ended at or before c's start (the event the comm
//           stream waits on is recorded after the work launched before it).
//   issue (CPU traces, compute -> comm): a comm node whose launch fell
//           inside a compute segment of a host thread depends on that
//           segment, which issued it (the launching op, e.g. gloo's
//           allreduce from inside autograd's AccumulateGrad, ends after
//           the comm starts: the one kind of edge allowed to overlap).
//   wait (comm -> compute, comm -> comm): a compute segment v that waited
//           (it started more than `wait_tolerance_ns` after both its stream
//           predecessor's end and its own launch) depends on the comm node c
//           of the rank that was launched before v and ended last within
//           that wait, i.e. in (max(predecessor end, launch), v.start]: c is
//           what v waited for. A segment with neither a predecessor nor a
//           launch time has no evidence of waiting and gets no such edge.
//           On a host thread (CPU traces) the comm may end up to 2 ms after
//           v starts: gloo's worker thread records the completion after the
//           waiting thread has resumed.
//           The same holds for a comm node with a known launch (a
//           collective queued behind another stream's collective, e.g. an
//           all-reduce after the reduce-scatter it needs).
// Every edge u -> v has u.end <= v.start except stream edges between ops
// that overlap on one stream (bad input; the caller validates).

#ifndef STRAG_SRC_GRAPH_GENERIC_RANK_EDGES_H_
#define STRAG_SRC_GRAPH_GENERIC_RANK_EDGES_H_

#include <cstdint>
#include <span>
#include <vector>

#include "graph/generic/segments.h"

namespace strag::graph {

enum class EdgeKind : uint8_t { kStream, kLaunch, kIssue, kWait };

struct LocalEdge {
  uint32_t from = 0;  // indices into the rank's nodes
  uint32_t to = 0;
  EdgeKind kind = EdgeKind::kStream;
};

// The edges among `nodes` (one rank, one step, as BuildLocalNodes lists
// them), in a deterministic order. O(n log n) plus the scans back over
// segments that had not ended when a comm node started.
std::vector<LocalEdge> BuildRankEdges(std::span<const LocalNode> nodes,
                                      int64_t wait_tolerance_ns);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_RANK_EDGES_H_
