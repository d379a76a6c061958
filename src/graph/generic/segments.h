// SPDX-License-Identifier: Apache-2.0
// Segments: the nodes of one rank in one step.
//
// Communication ops are nodes of their own. The rank's communication points
// (its comm ops in launch order, or start order when launch times are
// unknown) cut its timeline into intervals; the compute ops of one stream in
// one interval merge into ONE compute segment (start = first start, end =
// last end; its duration for the replay is its busy time, the sum of its
// ops' durations: idle gaps between them are untraced host time, which the
// what-if method counts as launch delay, as between the ops of an ops CSV). Nodes carry a launch position that orders them the way the
// host issued them: comm point k has position 2k + 1, a segment between comm
// points k - 1 and k has position 2k. So "u was launched before v" is
// `u.position < v.position`, for any two nodes of the rank.
//
// On a GPU the host runs ahead: a comm op launched early may start only
// when a kernel of another stream ends (an event wait), in the middle of an
// interval. A segment is therefore also cut where such a comm op started
// at its end (within 2 us), so that the dependency has a node to leave from.
//
// Nodes are listed by (position, stream); `seq` numbers the nodes of each
// type in that order, so (type, seq) names a node the same way in every step
// with the same structure.

#ifndef STRAG_SRC_GRAPH_GENERIC_SEGMENTS_H_
#define STRAG_SRC_GRAPH_GENERIC_SEGMENTS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "trace/op_type.h"
#include "trace/rank_trace.h"

namespace strag::graph {

// The logical stream of a CPU trace's first comm op of a step; the k-th
// has kCpuCommStream - k (segments.cc).
inline constexpr int32_t kCpuCommStream = -1;

struct LocalNode {
  trace::OpType type = trace::OpType::kCompute;
  int32_t seq = 0;       // among the nodes of this type
  int32_t stream = 0;    // CUDA stream or thread
  int32_t position = 0;  // launch position, see above
  int64_t start_ns = 0;  // own clock
  int64_t end_ns = 0;
  int64_t busy_ns = 0;  // sum of the merged ops' durations, <= end - start
  int64_t launch_ns = -1;  // launch of the earliest-starting op; -1 unknown
  int32_t comm = -1;       // index into RankTrace::comms; -1 for compute
  bool async_post = false;  // CommOp::async_post: nothing waits on it
  int32_t num_ops = 0;     // ops merged
  // CPU trace: the ops ran on host threads, so the segment that was running
  // when a comm op was launched on its thread is the one that issued it.
  bool host_thread = false;
};

// The comm kind of `op` as a generic comm type (kOtherComm for anything that
// is not one).
trace::OpType CommKind(const trace::CommOp& op);

// The nodes of `rows` (ops of one step of `trace`, valid rows only). With
// `node_of_row`, also which node each op went into: (*node_of_row)[i] is
// the index into the result of the node that holds rows[i].
std::vector<LocalNode> BuildLocalNodes(
    const trace::RankTrace& trace, std::span<const uint32_t> rows,
    std::vector<uint32_t>* node_of_row = nullptr);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_SEGMENTS_H_
