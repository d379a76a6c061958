// SPDX-License-Identifier: Apache-2.0
// Layout inference: the DP x PP layout of a profiler-traced job, from the
// structure of its communication (or from the user's flags).
//
// Point-to-point pairs (a send matched with its recv) link neighbouring
// pipeline stages: each connected chain of ranks is one pipeline, its
// stage 0 the end whose first p2p op of a step is a send (it sends the
// first activation; the last stage starts by receiving), and the k-th
// ranks of a stage by global rank are DP replica k. A job without p2p is
// data parallel: each rank its own replica. Flags, when given, win; where
// they contradict the traces' world size the inference is kept and a
// warning says why. TP groups are not inferred (a profiler job traces each
// GPU; a TP peer is a replica here unless --tp says otherwise).

#ifndef STRAG_SRC_GRAPH_GENERIC_LAYOUT_INFERENCE_H_
#define STRAG_SRC_GRAPH_GENERIC_LAYOUT_INFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/generic/generic_model.h"
#include "trace/topology.h"

namespace strag::graph {

struct LayoutFlags {
  int32_t dp = 0, pp = 0;  // 0: not given
  int32_t tp = 1, cp = 1;
  int64_t world_size = 0;  // of the traces (ranks, not only traced ones)
  int32_t gpus_per_node = 8;
};

struct InferredLayout {
  trace::Topology topology;  // places in model.ranks order
  std::vector<std::string> warnings;
  // The stages come from p2p signatures: the p2p ops have no peers yet
  // (p2p_peers.h can assign them, and the model be built again).
  bool peers_unknown = false;
};

InferredLayout InferLayout(const GenericModel& model, const LayoutFlags& flags);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_LAYOUT_INFERENCE_H_
