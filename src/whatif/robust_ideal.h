// SPDX-License-Identifier: Apache-2.0
// The robust ideal of profiler traces (IdealPool::kRole).
//
// The published ideal of an op is the mean over every worker, the
// straggler included: in a small world it is far from the job without the
// straggler (2 ranks, one 2x slow: the "ideal" is 1.5x the healthy rank).
// Here an op's ideal is pooled over the ranks with the same role (the same
// pipeline stage, so the same program) at the same position of the step:
//  - compute: the mean over steps and ranks, leaving out the ranks whose
//    compute per step exceeds their stage's lower median by more than
//    kOutlierShare and (three ranks or more) the stage's own spread: a
//    persistent straggler; input-dependent variation (sequence lengths)
//    stays in the mean, since rebalancing conserves work;
//  - communication: the median transfer time of the same position of the
//    step over every stage (a collective slow for a whole stage still
//    shows against the others).
// With several stages, each stage's compute is then scaled so that every
// stage does the mean stage's work (the ideal of an evenly partitioned
// pipeline: a heavy stage is a straggler, as with the published per-type
// pooling of the ops CSV). Only typical steps (kTypicalStep) are pooled: the
// ideal is what a normal step costs, not a warm-up step's.

#ifndef STRAG_SRC_WHATIF_ROBUST_IDEAL_H_
#define STRAG_SRC_WHATIF_ROBUST_IDEAL_H_

#include <span>
#include <vector>

#include "whatif/prepared_trace.h"

namespace strag::whatif {

// A rank whose compute per step exceeds its stage's lower median by more
// than this share (and its stage's spread) is left out of the ideal.
inline constexpr double kOutlierShare = 0.10;

// Steps whose traced time exceeds this multiple of the median step's (a
// warm-up step, a transient stall) take no part in the ideal.
inline constexpr double kTypicalStep = 1.5;

// The ideal cost of every node of a Layout::kRanks trace. `cost_nd` holds
// the no-delay costs per (node, instance) slot, s.
std::vector<double> RoleIdealCosts(const PreparedTrace& trace,
                                   std::span<const double> cost_nd);

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_ROBUST_IDEAL_H_
