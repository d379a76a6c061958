// SPDX-License-Identifier: Apache-2.0
// Cause classification over the window (live-monitoring.md §4.4) and the
// findings it yields, in the offline vocabulary (diagnose::Finding).
//
// A suspect cell's cause is judged on its implicated steps: the share of
// its lateness that its GC excess (host_pause), data-loading excess
// (data_loading) or compute excess (faulty_worker, when its tokens and
// sum_s2 match its peers' within 5%; sequence_length_imbalance when it gets
// more work) explains; a cause must explain `cause_coverage` (0.8) of it,
// else the straggler's cause is unclear (kNone). Job-level: a hot PP stage
// (stage_imbalance), busy time that follows sum_s2 with no persistent rank
// (sequence_length_imbalance), transfer time above its baseline with
// balanced busy time (communication), and healthy (none).

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_ONLINE_CAUSES_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_ONLINE_CAUSES_H_

#include <cstdint>
#include <string>

#include "diagnose/diagnosis.h"
#include "diagnose/online/online_detector.h"
#include "diagnose/online/window.h"

namespace strag::diagnose::online {

// The judged steps a cell or the job needs in the window before its gates
// can hold: min(10, window_steps).
int32_t MinJudged(const OnlineOptions& options);

// One cell over the window.
struct CellStats {
  int32_t judged = 0;
  double persistence = 0;       // implicated / judged
  double last_share = 0;        // its group's last arriver / judged
  double mean_lateness_ns = 0;  // over judged steps
  double mean_ratio = 1;        // busy / peers' median
  bool individual = false;      // mostly late by its own baseline
};
CellStats StatsOf(const CellSums& sums);

struct CellCause {
  Cause cause = Cause::kNone;
  double coverage = 0;  // share of its lateness the cause explains, [0, 1]
  std::string because;  // "GC pauses cover 94% of it"
};
CellCause ClassifyCell(const CellSums& sums, double cause_coverage);

// The job over the window.
struct WindowFacts {
  int32_t steps = 0, judged = 0;
  double mean_step_ns = 0, mean_ideal_ns = 0, mean_worker_ns = 0,
         mean_stage_ns = 0, mean_host_ns = 0, mean_comm_ns = 0;
  double floor_ns = 0;     // effect floor: max(ratio x step, min_ns)
  int32_t hot_stage = -1;  // stage index hot in the most steps
  double hot_share = 0, hot_ratio = 0;
  double seq_r = 0, seq_share = 0;  // mean r; share of steps measured
  int32_t distinct_last = 0;        // ranks last to finish over the window
  double spread = 0;                // distinct_last / min(judged steps, cells)
  int32_t comm_kind = -1;  // trace::CollGroup elevated in the most steps
  double comm_share = 0, comm_transfer_ns = 0, comm_baseline_ns = 0;
  double slowdown = 1;  // sum observed / sum ideal
};
WindowFacts MeasureWindow(const Window& window, const OnlineOptions& options,
                          int32_t cells);

// Gates of the job-level causes: `enter` when they hold (before the
// continuity gate), `exit` when they have clearly stopped.
struct JobGates {
  bool stage_enter = false, stage_exit = true;
  bool seq_enter = false, seq_exit = true;
  bool comm_enter = false, comm_exit = true;
};
// `persistent_worker`: a cell passes the persistence gate;
// `straggler_in_hot_stage`: one of those sits in the hot stage (then the
// stage is hot because of it: the straggler's finding, not the stage's).
JobGates JudgeJobGates(const WindowFacts& w, const OnlineOptions& options,
                       bool persistent_worker, bool straggler_in_hot_stage);

// Findings with their evidence, confidence in [0, 1].
Finding WorkerFinding(const CellStats& stats, const CellCause& cause,
                      int32_t rank, const OnlineOptions& options);
Finding StageFinding(const WindowFacts& w, int32_t pp,
                     const OnlineOptions& options);
Finding SequenceFinding(const WindowFacts& w);
Finding CommunicationFinding(const WindowFacts& w,
                             const OnlineOptions& options);
Finding HealthyFinding(const WindowFacts& w);

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_ONLINE_CAUSES_H_
