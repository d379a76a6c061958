// SPDX-License-Identifier: Apache-2.0
// Segment ops: what each compute segment ("compute #k", segments.h) of every
// rank and kept step is made of, as per-name totals: for each distinct op
// name (a GPU kernel, or a CPU op in a CPU-only trace) and, in GPU traces,
// the CPU op that launched it (RankTrace::launch_op: aten::mm), its count
// and summed duration. Enough to say which kernels, launched by which CPU
// ops, make a slow segment slow, without keeping the trace's rows.
//
// Names are interned across ranks (a kernel has one id in every rank).
// Memory: one OpTotal (24 bytes) per distinct (name, launching op) per
// segment and step, at most one per op row, usually far fewer. Built by
// BuildGenericModel when GenericOptions::keep_segment_ops is set.

#ifndef STRAG_SRC_GRAPH_GENERIC_SEGMENT_OPS_H_
#define STRAG_SRC_GRAPH_GENERIC_SEGMENT_OPS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/generic/segments.h"
#include "trace/rank_trace.h"

namespace strag::graph {

// OpTotal::op when the ops were launched outside any CPU op, or are CPU ops
// themselves (CPU-only traces).
inline constexpr uint32_t kNoLaunchOp = UINT32_MAX;

struct OpTotal {
  uint32_t name = 0;  // into SegmentOps::names
  int32_t count = 0;  // ops of that name (and op) in the segment
  int64_t total_ns = 0;
  // The CPU op that launched them (into SegmentOps::names), or kNoLaunchOp.
  uint32_t op = kNoLaunchOp;
};

struct SegmentOps {
  std::vector<std::string> names;  // interned across ranks
  std::vector<int32_t> ranks;      // rank index -> global rank, sorted
  // Per rank index: true when its names are CPU ops (a CPU-only trace),
  // false when they are GPU kernels (or memcpy / memset).
  std::vector<bool> cpu_ops;
  std::vector<int64_t> steps;  // step ids, ascending
  // Compute segments per step of rank index r: first_segment[r + 1] -
  // first_segment[r] (the same in every kept step); size ranks + 1.
  std::vector<uint32_t> first_segment{0};
  // Per (step index s, flat segment g = first_segment[r] + k): its totals
  // are totals[offsets[i] .. offsets[i + 1]), i = s * num_segments() + g,
  // sorted by name id, then op id.
  std::vector<uint64_t> offsets{0};
  std::vector<OpTotal> totals;

  size_t num_segments() const { return first_segment.back(); }
  bool empty() const { return totals.empty(); }
  // Index of a global rank, or -1 when it is not in the table.
  int32_t RankIndex(int32_t rank) const;
  // Index of a step id, or -1.
  int32_t StepIndex(int64_t step) const;
  // The totals of compute #k of rank index r in step index s (empty when
  // out of range).
  std::span<const OpTotal> Of(size_t r, size_t k, size_t s) const;
};

// The per-(name, launching op) totals of the compute segments of one
// rank's step: `nodes` and `node_of_row` as BuildLocalNodes returns them
// for `rows`. Names and ops are the trace's own ids (RankTrace::names).
// Per compute node in order: its totals in totals[offsets[k] ..
// offsets[k + 1]).
struct LocalSegmentOps {
  std::vector<uint32_t> offsets{0};
  std::vector<OpTotal> totals;
};
LocalSegmentOps SumSegmentOps(const trace::RankTrace& trace,
                              std::span<const uint32_t> rows,
                              const std::vector<LocalNode>& nodes,
                              const std::vector<uint32_t>& node_of_row);

// Builds a SegmentOps table step by step, rank by rank (the order of
// `first_segment`), re-interning each trace's names.
class SegmentOpsBuilder {
 public:
  // The ranks (rank index order) with their traces and compute segments
  // per step.
  void AddRank(const trace::RankTrace& trace, uint32_t segments);
  // Appends one rank's step; call for every rank of a step, in rank order,
  // then the next step. `step` is the step id.
  void Add(size_t rank_index, int64_t step, const LocalSegmentOps& local);
  SegmentOps Take() { return std::move(out_); }

 private:
  uint32_t Intern(size_t rank_index, uint32_t local);

  SegmentOps out_;
  std::vector<const trace::RankTrace*> traces_;
  std::vector<std::vector<uint32_t>> global_;  // per rank: local -> global
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_SEGMENT_OPS_H_
