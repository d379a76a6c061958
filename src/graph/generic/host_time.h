// SPDX-License-Identifier: Apache-2.0
// Host time by kind: how long each rank's host spent, in each kept step, in
// work the trace names (a DataLoader's next batch, a garbage collection),
// from the annotations and Python events of its trace (RankTrace::host_spans)
// clipped to the rank's own ProfilerStep span. Overlapping spans of one kind
// count once.

#ifndef STRAG_SRC_GRAPH_GENERIC_HOST_TIME_H_
#define STRAG_SRC_GRAPH_GENERIC_HOST_TIME_H_

#include <cstdint>
#include <span>
#include <vector>

#include "graph/generic/generic_model.h"
#include "trace/rank_trace.h"

namespace strag::graph {

struct HostTime {
  // [rank index * steps + step], ns; each empty when no trace names such
  // work.
  std::vector<int64_t> data_loading_ns;
  std::vector<int64_t> gc_ns;
};

// `traces` in any order (matched to model.ranks by rank).
HostTime MeasureHostTime(std::span<const trace::RankTrace> traces,
                         const GenericModel& model);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_HOST_TIME_H_
