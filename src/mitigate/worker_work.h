// SPDX-License-Identifier: Apache-2.0
// What each traced worker does, against its peers: the facts several
// policies share (its persistent speed against its stage, what the other
// workers of its stage take for the same op).

#ifndef STRAG_SRC_MITIGATE_WORKER_WORK_H_
#define STRAG_SRC_MITIGATE_WORKER_WORK_H_

#include <cstddef>
#include <string>
#include <vector>

#include "mitigate/job_view.h"

namespace strag::mitigate {

// Per cell: its speed against its PP stage: the median over steps of its
// compute over the mean compute of its stage's cells in the step (1: a
// typical worker, 2: twice as slow), or 1 when that median is within three
// standard errors of 1 (the work a worker happened to draw is not speed). A
// persistent property of the machine, which moving work does not change.
// `per_worker` is diagnose::WorkerComputePerStep (cells share its order).
std::vector<double> SpeedFactors(
    const whatif::PreparedTrace& trace, const Cells& cells,
    const std::vector<std::vector<double>>& per_worker);

// Per slot: what the other workers of the slot's PP stage take for the same
// op in the same step, on average (leave-one-out: a worker's own slowness
// does not count, and work that varies from step to step averages out over
// the steps as the worker's own does; the slot's own cost without peers).
// Cells marked in `skip` (known slow ones) are left out of every average.
// `peers` (when set) gets per cell how many workers share its stage.
std::vector<double> PeerTypical(const whatif::PreparedTrace& trace,
                                const Cells& cells,
                                const std::vector<uint8_t>& skip,
                                std::vector<size_t>* peers = nullptr);

// Why the replay cannot run DP replicas as lanes of their own ("" when it
// can): the policies that add, drop or decouple replicas need an ops CSV or
// a simulated job (a profiler trace's replicas are sets of ranks).
std::string ReplicaLanesMissing(const whatif::PreparedTrace& trace);

// Microbatches per step of a DP replica (forwards of stage 0 per chunk).
int32_t Microbatches(const whatif::PreparedTrace& trace);

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_WORKER_WORK_H_
