// SPDX-License-Identifier: Apache-2.0
// Peers of point-to-point ops that name none (torch 1.13's gloo send/recv),
// from the pipeline layout inferred from the ranks' p2p signatures
// (layout_inference.h).
//
// In a pipeline schedule (GPipe, 1F1B) a stage receives activations from
// the previous stage and runs a forward, then sends to the next; it
// receives gradients from the next stage and runs a backward (about twice
// the forward), then sends to the previous. So an end stage exchanges with
// its one neighbour, and a middle stage's p2p op goes the way of the compute
// it feeds or follows: a recv before a forward is from the previous stage,
// a send after one goes to the next; backwards the other way. Forwards are
// told from backwards by the schedule family (w warm-up forwards, then
// alternating, then w backwards; w = m is GPipe) whose forwards are the
// shortest. Replica d of a stage talks to replica d
// of its neighbours. Sends and recvs then pair by order per link, as ops
// that name their peer do.

#ifndef STRAG_SRC_GRAPH_GENERIC_P2P_PEERS_H_
#define STRAG_SRC_GRAPH_GENERIC_P2P_PEERS_H_

#include <cstdint>
#include <vector>

#include "graph/generic/generic_model.h"
#include "trace/rank_trace.h"
#include "trace/topology.h"

namespace strag::graph {

// Sets CommOp::peer of the p2p ops of `traces` (one per rank of `model`,
// the model built from them) that have none; returns how many. `topology`
// is the model's layout (places in model.ranks order) with pp > 1.
int64_t AssignPipelinePeers(const GenericModel& model,
                            const trace::Topology& topology,
                            std::vector<trace::RankTrace>* traces);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_P2P_PEERS_H_
