// SPDX-License-Identifier: Apache-2.0
// EstimateFootprint: how many ops a spec simulates and how much memory a
// `strag simulate` run of it holds, from the spec alone (closed forms, O(1)
// in the job's size, no allocation), so that a job too large for the
// machine is refused before anything is allocated.
//
// Ops are counted exactly: every traced worker (one (DP replica, stage)
// pair; it stands for its whole TP x CP group, so TP and CP do not multiply
// the ops) runs the same program each step, whose length follows from pp,
// vpp, microbatches and whether DP collectives exist (sim/schedule_model.h).
// Bytes are an upper estimate from per-op costs measured on presets and
// random specs (footprint.cc states them).

#ifndef STRAG_SRC_SIM_FOOTPRINT_H_
#define STRAG_SRC_SIM_FOOTPRINT_H_

#include <cstdint>
#include <limits>
#include <optional>

#include "sim/job_spec.h"

namespace strag::sim {

// What the run does besides simulating.
struct FootprintOptions {
  // An ops table of steps [first_step, last_step] is built and written
  // (`--out`, `--steps-window`); the whole job is simulated regardless.
  bool write = false;
  int64_t first_step = 0;
  int64_t last_step = std::numeric_limits<int64_t>::max();
  // The job is analysed: what was written when `write`, else all of it.
  bool analyze = false;
  // Replays the analysis runs at once (its threads).
  int64_t threads = 1;
  // The job's steps when other than spec.job.steps (how many would fit).
  std::optional<int64_t> steps = std::nullopt;
  // The write streams (SimulateInWindows, `--out` without Kineto): this
  // many steps are simulated at once (StreamWindowSteps); 0: the whole job
  // is held and its table built.
  int64_t stream_window_steps = 0;
};

// Counts saturate at INT64_MAX (a spec can describe more than 2^63 ops).
struct Footprint {
  int64_t ops_per_step = 0;      // of one DP replica: all stages, one step
  int64_t lanes = 0;             // (DP replica, step) pairs: steps x DP'
  int64_t ops = 0;               // simulated: ops_per_step x lanes
  int64_t written_ops = 0;       // in the written steps (0 unless `write`)
  int64_t sequence_lengths = 0;  // held: lanes x microbatches x n
  // Estimated peak memory, by part (an upper estimate of the peak resident
  // size: the parts of the write and analysis phases are added although
  // they do not all peak together).
  int64_t simulate_bytes = 0;  // process, schedule, costs, replay times
  int64_t sequence_bytes = 0;  // lengths and their text in the ops table
  int64_t write_bytes = 0;     // ops table, CSV text, gzip / Kineto output
  int64_t analyze_bytes = 0;   // the analysis of `strag analyze`
  int64_t bytes = 0;           // their sum
};

Footprint EstimateFootprint(const JobSpec& spec,
                            const FootprintOptions& options = {});

// The per-op arrays of a streamed run's window of steps are kept within
// this (and a quarter of the memory budget), unless one step is larger.
inline constexpr int64_t kStreamWindowBytes = int64_t{256} << 20;

// Steps simulated at once by a streamed write whose window may hold
// `window_bytes` (at least 1, at most the job's steps).
int64_t StreamWindowSteps(const JobSpec& spec, int64_t window_bytes);

// The number of traced ops of one DP replica (every stage) in one step:
// BuildScheduleModel(pp, vpp, microbatches, with_dp) has this many nodes.
int64_t OpsPerStep(int32_t pp, int32_t vpp, int32_t microbatches, bool with_dp);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_FOOTPRINT_H_
