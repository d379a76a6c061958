// SPDX-License-Identifier: Apache-2.0
// Simulate: a hybrid-parallel training job drawn from its JobSpec.
//
// Durations come from the spec's models (compute per stage and microbatch,
// sequence lengths, noise) and its straggler injections; they are replayed
// with the Megatron dependency model and the replay engine of `strag
// analyze` (sim/schedule_model.h). The ground truth of every injection is
// the job replayed without it, all other draws unchanged.
//
// Layout: DP' = dp + backup_workers replicas of a pipeline of pp stages; a
// traced worker is one (dp rank, stage) whose TP x CP group it stands for;
// global rank = ((stage * DP' + dp) * cp + cp_rank) * tp + tp_rank; node =
// rank / gpus_per_node.

#ifndef STRAG_SRC_SIM_SIMULATOR_H_
#define STRAG_SRC_SIM_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/huge_page_allocator.h"
#include "base/status.h"
#include "replay/replay_engine.h"
#include "sim/job_spec.h"
#include "sim/schedule_model.h"
#include "trace/job_meta.h"
#include "trace/ops_table.h"

namespace strag::sim {

// What one injection did.
struct TruthRecord {
  std::string kind;   // slow_worker, gc_pause, slow_link, dataloader_stall
  int64_t rank = -1;  // injected global rank (-1: many ranks / a node)
  int32_t dp = -1, pp = -1, tp = -1, cp = -1;  // of `rank`
  int32_t node = -1;
  int64_t worker_rank = -1;       // the traced worker that stands for `rank`
  std::vector<int64_t> tp_group;  // global ranks of that worker's TP group
  std::vector<int64_t> steps;     // steps where it acted
  double factor = 1.0;
  // Mean observed step time (launch delays included) with the injection /
  // without it, and the difference in ms: the true slowdown it caused.
  double slowdown = 1.0;
  double excess_step_ms = 0.0;
  // The same without launch delays: its share of the blocking slowdown S
  // that `strag analyze` measures (0 excess for pure host pauses).
  double blocking_slowdown = 1.0;
  double blocking_excess_step_ms = 0.0;
};

// A host pause injected before a worker's forward (a launch delay): what a
// live agent would report as GC or data-loading time of that step.
struct HostDelay {
  enum class Kind : uint8_t { kGc, kData };
  size_t step = 0;  // index into SimulatedJob::steps
  int32_t dp = 0, stage = 0;
  Kind kind = Kind::kGc;
  float seconds = 0;
};

struct SimulatedJob {
  JobSpec spec;
  ScheduleModel schedule;
  int32_t dp_replicas = 1;     // dp + backup_workers
  std::vector<int64_t> steps;  // step ids 0..steps-1
  // Per (node, lane), lane = step * dp_replicas + dp: op cost (duration or
  // transfer time, s) and host launch delay (s).
  BigVector<double> cost;
  BigVector<float> launch_delay;
  replay::ReplayTimes times;     // replayed start / end, s (step-relative);
                                 // only with SimulateOptions::keep_times
  BigVector<float> start32;      // replayed start (binary32), without them
  replay::StepTimes step_times;  // per step: span and T_opt
  std::vector<TruthRecord> truth;
  // Sequence lengths of each (step, dp replica, microbatch), flattened.
  std::vector<std::vector<int64_t>> sequences;
  std::vector<HostDelay> host_delays;  // GC pauses and data stalls drawn

  size_t num_nodes() const { return schedule.model.keys.size(); }
  size_t num_lanes() const {
    return steps.size() * static_cast<size_t>(dp_replicas);
  }
  int64_t WorkerRank(int32_t dp, int32_t stage) const;
};

struct SimulateOptions {
  bool truth = true;  // replay once per injection without it
  // Keep every start and end in f64 (16 bytes per op, needed by ToOpsTable);
  // otherwise only the binary32 starts are kept (4 bytes per op), enough to
  // analyse the job in process.
  bool keep_times = true;
  // SimulateInWindows: steps simulated at once (0: all of them).
  int64_t window_steps = 0;
};

// The whole job at once: every per-op array of every step is kept.
Result<SimulatedJob> Simulate(const JobSpec& spec,
                              const SimulateOptions& options = {});

// Sees one window of consecutive steps of a job being simulated: a
// SimulatedJob whose steps (the window's step ids), sequences, cost,
// launch_delay, times / start32, step_times and host_delays (`step` indexes
// the window's steps) are those of the window only. An error stops the
// simulation and is returned.
using WindowVisitor = std::function<Status(const SimulatedJob& window)>;

// Simulate, options.window_steps steps at a time in step order (memory: the
// per-op arrays of one window, 8-24 bytes per step and, with truth, 16 per
// injection and step), calling `visit` with each window once replayed.
// Nothing couples the steps but what is kept per step: every draw is keyed
// by the global step, the replay never crosses steps, the balancing cap is
// found up front and the means reduce the per-step values at the end; so
// the windows hold the very values Simulate holds, and the returned job has
// the same steps, step_times and truth, bit for bit (its per-op arrays are
// those of the whole job when it was one window, else empty). Errors are
// Simulate's: after a window with a drawn duration beyond the limit, or
// once the trace is too long, the rest is simulated without visits to find
// the same first error (and the trace's whole length).
Result<SimulatedJob> SimulateInWindows(const JobSpec& spec,
                                       const SimulateOptions& options,
                                       const WindowVisitor& visit);

// The simulated trace as an ops table (steps [first, last] only; needs
// keep_times), with tp_rank, tokens and seq_lens columns; step k starts
// where step k - 1 ended (sim/ops_table_stream.h builds it in batches).
trace::OpsTable ToOpsTable(const SimulatedJob& job, int64_t first_step,
                           int64_t last_step);

// The metadata that goes with the table (meta.yaml).
trace::JobMeta MetaOf(const SimulatedJob& job);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_SIMULATOR_H_
