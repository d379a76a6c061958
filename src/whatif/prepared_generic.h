// SPDX-License-Identifier: Apache-2.0
// PrepareGenericTrace: a generic dependency model (graph/generic, built from
// PyTorch profiler traces) turned into the what-if engine's input.
//
// The model's nodes are the ops of one step on every rank; each step is one
// instance (Layout::kRanks: dp = 1, "stage" s = the s-th rank). Times become
// binary32 seconds relative to the step's earliest start, then the same
// preprocessing as for the ops CSV derives launch delays and transfer times.

#ifndef STRAG_SRC_WHATIF_PREPARED_GENERIC_H_
#define STRAG_SRC_WHATIF_PREPARED_GENERIC_H_

#include "base/status.h"
#include "graph/generic/generic_model.h"
#include "trace/topology.h"
#include "whatif/prepared_trace.h"

namespace strag::whatif {

// Takes the model's graph (moved into the result). `topology` has one place
// per model rank, in model.ranks order; empty: each rank its own replica.
Result<PreparedTrace> PrepareGenericTrace(graph::GenericModel model,
                                          trace::Topology topology = {});

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_PREPARED_GENERIC_H_
