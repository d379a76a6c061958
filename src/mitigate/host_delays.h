// SPDX-License-Identifier: Apache-2.0
// Host delays: the launch delays the host is to blame for, split into input
// stalls and pauses (GC, Python). Profiler traces name data loading and GC
// (those count whole, on any op of the rank, even when they recur every step);
// the rest counts on compute ops past the op's median (a comm op's launch delay
// in an ops CSV says when it was posted, not that the host paused). In an ops
// CSV a stall delays a worker's first forward of a step, where a pause also
// falls one time in F (F forwards per step): the job's pauses at the other
// forwards say how many of a worker's first-forward delays are pauses. Shared
// by planned_gc and input_pipeline.

#ifndef STRAG_SRC_MITIGATE_HOST_DELAYS_H_
#define STRAG_SRC_MITIGATE_HOST_DELAYS_H_

#include <cstdint>
#include <set>
#include <vector>

#include "mitigate/job_view.h"

namespace strag::mitigate {

// A delay counts from 5 ms above its op's median launch delay (the
// diagnosis' pause threshold).
inline constexpr float kHostDelayS = 0.005f;

struct HostDelays {
  // Per slot [node * instances + instance]: the excess over the op's
  // median launch delay, split.
  std::vector<float> stall;  // input stalls
  std::vector<float> pause;  // pauses
  // Named GC the trace counts inside an op's duration (profiler traces:
  // the collection ran between two ops of one compute segment), s.
  std::vector<float> pause_in_cost;
  std::vector<float> median;  // per node: its median launch delay
  // Per (cell, step) [cell * steps + step], s.
  std::vector<double> stall_per_step;
  std::vector<double> pause_per_step;
};

HostDelays FindHostDelays(const whatif::PreparedTrace& trace,
                          const Cells& cells);

// The (worker, step) cells of `per_step` (one of HostDelays' per-step
// arrays) with at least kHostDelayS: their sizes, total, longest, ranks.
struct DelayEvents {
  std::vector<double> sizes;
  double total = 0, longest = 0;
  std::set<int32_t> ranks;
};
DelayEvents EventsOf(const std::vector<double>& per_step, const Cells& cells,
                     size_t steps);

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_HOST_DELAYS_H_
