// SPDX-License-Identifier: Apache-2.0
// Input size: how much input (tokens) each rank processed in each kept
// step, from the shapes the profiler recorded (`record_shapes`: "Input
// Dims" of CPU ops, RankTrace::input_shapes).
//
// Which shapes measure tokens is not written anywhere, so it is chosen from
// the data: for each (op name, input position), the per-step sum of the
// input's element count on each rank. A measure must be present in every
// kept (rank, step) and vary between them (a weight never does); of those,
// the one with the smallest median is kept: token ids ([batch, sequence])
// are the smallest input that grows with the sequence, and every other such
// input ([b, s, hidden], [b, heads, s, s]) orders ranks the same way or
// with s² the same way too.
//
// Cost: one pass over the shape records, a hash map of (name, position).

#ifndef STRAG_SRC_GRAPH_GENERIC_INPUT_SIZE_H_
#define STRAG_SRC_GRAPH_GENERIC_INPUT_SIZE_H_

#include <span>
#include <string>
#include <vector>

#include "graph/generic/generic_model.h"
#include "trace/rank_trace.h"

namespace strag::graph {

struct InputSize {
  // [rank index * steps + step], elements; empty when the traces record no
  // shapes or no shape varies.
  std::vector<double> per_step;
  std::string source;  // e.g. "aten::embedding input 2"; empty with none
};

// `traces` in any order (matched to model.ranks by rank).
InputSize MeasureInputSize(std::span<const trace::RankTrace> traces,
                           const GenericModel& model);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_INPUT_SIZE_H_
