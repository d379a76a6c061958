// SPDX-License-Identifier: Apache-2.0
// Host delays: the launch delays of compute ops above what the op usually
// waits (a comm op's launch delay says when it was posted, not that the
// host paused), split into input stalls and pauses (GC, Python). Profiler
// traces name data loading; in an ops CSV a stall delays a worker's first
// forward of a step, where a pause also falls one time in F (F forwards per
// step): the job's pauses at the other forwards say how many of a worker's
// first-forward delays are pauses. Shared by planned_gc and input_pipeline.

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
