// SPDX-License-Identifier: Apache-2.0
// The generic dependency model: for traces that are not Megatron op tables
// (PyTorch profiler traces of DDP, FSDP or any loop; GPU with NCCL or CPU
// with gloo), read into one trace::RankTrace per rank.
//
// Per rank and step: comm ops are nodes; the compute ops of one stream
// between two communication points merge into one compute segment
// (segments.h). Within a rank: stream order, compute -> comm by launch
// order, comm -> compute where a segment waited (rank_edges.h). Across
// ranks: matched collectives and send/recv pairs are comm groups
// (collective_matching.h). Node identity is (rank, type, seq), the same in
// every kept step: steps whose structure differs from the reference (the
// structure most complete steps share) are dropped with a warning. Clocks
// are aligned from matched collective ends (clock_alignment.h) and the
// per-step times are given aligned.
//
// Bad input is data: ops outside every step, steps that differ, collectives
// a member never joins, sends without a recv are counted and warned about;
// only "nothing usable" is an error.

#ifndef STRAG_SRC_GRAPH_GENERIC_GENERIC_MODEL_H_
#define STRAG_SRC_GRAPH_GENERIC_GENERIC_MODEL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/dep_graph.h"
#include "graph/generic/clock_alignment.h"
#include "graph/generic/segment_ops.h"
#include "trace/op_type.h"
#include "trace/rank_trace.h"

namespace strag::graph {

struct GenericNode {
  int32_t rank_index = 0;  // into GenericModel::ranks
  trace::OpType type = trace::OpType::kCompute;
  int32_t seq = 0;     // order among the rank's nodes of this type in a step
  int32_t stream = 0;  // CUDA stream, or thread id in a CPU-only trace
};

struct GenericOptions {
  // A segment "waited" when it started this much later than both its stream
  // predecessor's end and its own launch.
  int64_t wait_tolerance_ns = 2000;
  bool align_clocks = true;
  ClockAlignOptions clock;
  // Warnings of one kind beyond this many are summarised in one line.
  size_t max_warnings_per_kind = 10;
  // Keep what each compute segment is made of (GenericModel::segment_ops):
  // per-name counts and totals, for the report's kernel detail.
  bool keep_segment_ops = false;
};

struct GenericCounters {
  int64_t ops_used = 0;             // ops in the kept steps
  int64_t ops_outside_steps = 0;    // in no ProfilerStep span of their rank
  int64_t ops_invalid = 0;          // negative duration, bad comm index
  int64_t steps_seen = 0;           // step ids present on at least one rank
  int64_t steps_dropped = 0;        // missing on a rank or structure differs
  int64_t ranks_without_steps = 0;  // traces with no op in any step (left out)
  int64_t collectives = 0;          // comm groups of the graph
  int64_t collectives_incomplete = 0;  // ... that a member never joined
  int64_t p2p_unmatched = 0;           // sends / recvs without their peer
  int64_t duplicate_comm_ids = 0;      // same group + seq twice on a rank
  int64_t edge_violations = 0;  // edges u -> v with u.end > v.start (ref)
  // (edge, step) pairs of the other kept steps whose times contradict an
  // edge seen in the reference step (a dependency that does not always hold).
  int64_t edge_violations_other_steps = 0;
  int64_t detached_nodes = 0;  // not connected to the main component
};

struct GenericModel {
  std::vector<int32_t> ranks;        // rank_index -> global rank, sorted
  std::vector<std::string> sources;  // rank_index -> trace file name
  std::vector<GenericNode> nodes;    // NodeId -> identity, same in every step
  DepGraph graph{0};                 // finalized
  // The last node of every stream of every rank (in the reference step):
  // the step ends when all of them have ended.
  std::vector<NodeId> sink_nodes;
  std::vector<NodeId> detached_nodes;  // exempt from the connectivity check
  std::vector<int64_t> steps;          // kept step ids, ascending
  int64_t reference_step = 0;          // the step the graph was built from
  // Per (node, step), layout [node * steps.size() + step], clock-aligned ns.
  // A compute segment's duration is its busy time (segments.h).
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  ClockAlignment clock;  // per rank index
  // With GenericOptions::keep_segment_ops: the compute segments' per-name
  // totals in every kept step (looked up by step id: DropWarmupSteps
  // leaves them alone).
  SegmentOps segment_ops;
  std::vector<std::string> warnings;
  GenericCounters counters;

  size_t num_steps() const { return steps.size(); }
  int64_t start(NodeId v, size_t step) const {
    return start_ns[v * steps.size() + step];
  }
  int64_t dur(NodeId v, size_t step) const {
    return dur_ns[v * steps.size() + step];
  }
};

// "rank 3 all-reduce #2", "rank 0 compute #4 (stream 7)".
std::string DescribeNode(const GenericModel& model, NodeId v);

// Builds the model from one trace per rank (any order). Fails with
// kInvalidInput when the input cannot be used at all: no traces, two traces
// of one rank, columns of unequal length, or no step that survives (the
// message says why); everything else is a warning and a counter.
Result<GenericModel> BuildGenericModel(std::span<const trace::RankTrace> ranks,
                                       const GenericOptions& options = {});

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_GENERIC_MODEL_H_
