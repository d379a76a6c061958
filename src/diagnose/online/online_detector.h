// SPDX-License-Identifier: Apache-2.0
// OnlineDetector: the streaming straggler detector of `strag serve`
// (reference/live-monitoring.md §4). It is fed one closed step at a time
// (the records of the ranks that reported it) and keeps, per rank, a window
// of recent steps; it names stragglers, their causes and alerts in the same
// vocabulary as the offline diagnosis (diagnose::Cause, diagnose::Diagnosis).
//
// Per closed step, within peer groups of comparable work (same PP stage; TP
// members collapsed to their max):
//   busy B_r = step_ns - time in collectives; median and MAD of B;
//   robust z = (B - med) / (1.4826 max(MAD, 0.005 med, 50 us));
//   lateness = B - med; last arriver = argmax B (cross-checked with the
//   clock-free inversion: the least time inside the DP collectives);
//   worker excess X^w = max over groups of (B_last - med); stage excess
//   X^s = (m + p - 1)/m (max_s med_s - mean_s med_s); ideal = T - X^w - X^s.
// A rank is "implicated" in a step when it is its group's last arriver or
// z > 3.5, and its lateness >= max(1% of the step, 1 ms). Persistence is
// the share of implicated steps over the window (W = max(window_steps,
// window_s)). An alert fires when persistence >= 0.5, the rank's mean
// excess >= max(2% of the step, 5 ms) and both have held for continuity_s
// of step time; it resolves by hysteresis (persistence < 0.2 or excess
// below half the floor, for exit_s). A recurring straggler, late in 25% of
// the steps with twice that mean excess (GC every few steps), passes the
// persistence gate too. Groups of fewer than 4 ranks judge a
// rank against its own rolling median as well. A one-sided CUSUM on the
// job's log step time (k = 0.5, h = 8) marks regime changes.
//
// Time is the data's: the median t_end_ns of a step's records, never the
// collector's clock, so a replay of the same records gives the same
// alerts. Pure: no I/O, no threads, no clocks. Deterministic.
//
// Cost: CloseStep is O(n log n) in the ranks of the step (medians by
// nth_element); memory O(ranks x window).

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_ONLINE_DETECTOR_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_ONLINE_DETECTOR_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "diagnose/diagnosis.h"
#include "trace/coll_group.h"

namespace strag::diagnose::online {

// Where a rank sits; -1 when unknown (then pp 0, dp = rank, tp 0).
struct RankPlace {
  int32_t rank = 0;
  int32_t dp = -1, pp = -1, tp = -1;
  int32_t node = -1;  // -1: rank / gpus_per_node
};

// One rank's record of one step (ingest::agent::StepRecord, as the detector
// needs it). Nanoseconds.
struct RankStep {
  int32_t rank = 0;
  int64_t t_end_ns = 0;  // the rank's wall clock at the step's end
  int64_t step_ns = 0;
  int64_t data_ns = 0, fwd_ns = 0, bwd_ns = 0, opt_ns = 0;
  int64_t gc_ns = 0;
  trace::CollNs coll_ns = {};  // time inside collectives, by group
  double tokens = 0, sum_s2 = 0;  // 0: not given
  uint32_t flags = 0;             // nonzero: warm-up, checkpoint, ...: the
                                  // step is recorded but not judged
};

struct OnlineOptions {
  int32_t window_steps = 100;  // W = max(window_steps, window_s of steps)
  double window_s = 300;
  double persistence_enter = 0.5;
  double persistence_exit = 0.2;
  // Or late in this share of steps with a mean excess of twice the floor:
  // a recurring straggler (GC every few steps).
  double recurring_share = 0.25;
  double effect_ratio = 0.02;          // of the step
  int64_t effect_min_ns = 5'000'000;   // and at least this
  double continuity_s = 240;           // gates held this long to fire
  double exit_s = 600;                 // exit conditions held this long
  int32_t warmup_steps = 3;            // first steps (of a job or rank
                                       // epoch) not judged
  int32_t silent_steps = 5;            // closed steps missed: rank silent
  double cause_coverage = 0.8;         // a cause must explain this much
  double cusum_k = 0.5, cusum_h = 8;
  int32_t top_k = 5;
  int32_t gpus_per_node = 8;
  int32_t microbatches = 1;            // m, for the stage excess
};

// What one closed step gave.
struct StepSummary {
  int64_t step = 0;
  int64_t t_end_ns = 0;         // median of the records' t_end_ns
  int64_t step_ns = 0;          // observed: max over ranks
  int64_t ideal_ns = 0;         // step_ns - worker_excess - stage_excess
  int64_t worker_excess_ns = 0;
  int64_t stage_excess_ns = 0;
  int32_t last_rank = -1;       // the rank with the largest lateness
  int64_t lateness_ns = 0;
  int32_t reporting = 0;        // ranks with a record of this step
  bool judged = false;          // false: warm-up or flagged
  bool regime_change = false;   // the job CUSUM fired on this step
};

enum class AlertName {
  kStragglerPersistent,  // TrainingStragglerPersistent
  kRankSilent,           // TrainingRankSilent
  kRegimeChange,         // TrainingStepRegimeChange (fires and resolves at
                         // once: an event, not a state)
};
const char* AlertNameText(AlertName name);  // "TrainingStragglerPersistent"

// An alert starting (firing) or ending (resolved).
struct AlertEvent {
  int64_t id = 0;  // stable per detector, from 1
  AlertName name = AlertName::kStragglerPersistent;
  bool firing = true;
  Cause cause = Cause::kNone;
  std::vector<int32_t> ranks;  // suspects, worst first
  std::string scope;           // "rank 2, PP stage 0, DP replica 2, node 0"
  int64_t step = 0;            // the step that decided it
  int64_t t_ns = 0;
  double excess_ratio = 0;     // the suspects' excess / step
  std::string summary;         // one line for people
};

// A rank in the top-k by contribution over the window.
struct Suspect {
  RankPlace place;
  double persistence = 0;     // share of judged steps in the window implicated
  double lateness_ns = 0;     // mean lateness over the window
  double excess_ratio = 0;    // mean lateness / mean step
  double z = 0;               // last step's robust z
  Cause cause = Cause::kNone; // probable cause of its lateness
  double coverage = 0;        // share of the lateness the cause explains
  int64_t since_step = -1;    // gates held since this step, -1: not held
};

// The detector's current picture: what the dashboard, /metrics and the
// on-call block show.
struct OnlineView {
  Diagnosis diagnosis;        // same fields and vocabulary as offline
  double utilization = 1;     // window: sum ideal / sum observed
  double slowdown = 1;        // window: sum observed / sum ideal
  int64_t steps_closed = 0;
  int64_t last_step = -1;
  double mean_step_s = 0;     // window
  double mean_excess_s = 0;   // window: X^w + X^s
  std::vector<Suspect> top;   // at most top_k, worst first
  // The heatmap, SMon style: busy / median of its peer group, per (pp, dp)
  // cell (TP collapsed to the max), row-major pp x dp; last step and window
  // mean. 0 for a cell with no rank.
  int32_t dp_size = 0, pp_size = 0;
  std::vector<float> heat_last, heat_mean;
  std::vector<double> stage_busy_s;  // median busy per stage, last step
  // Lost GPU-seconds per GPU since the start, by kind: sync_wait (time in
  // collectives beyond the group's least), host_delay (data + GC beyond the
  // median), compute (the rest of the excess).
  double lost_sync_wait_s = 0, lost_host_delay_s = 0, lost_compute_s = 0;
  double wasted_s = 0;        // sum over closed steps of (T - ideal)
  std::vector<int32_t> silent_ranks;
  std::vector<AlertEvent> active;  // firing alerts
};

struct StepResult {
  StepSummary summary;
  std::vector<AlertEvent> events;  // alerts that started or ended
};

class OnlineDetector {
 public:
  explicit OnlineDetector(OnlineOptions options = {});
  ~OnlineDetector();
  OnlineDetector(OnlineDetector&&) noexcept;
  OnlineDetector& operator=(OnlineDetector&&) noexcept;

  // Registers or moves a rank (a "rank" record). Ranks seen first in a
  // step record get a default place.
  void SetPlace(const RankPlace& place);
  int32_t RankCount() const;

  // One closed step. `ranks` are the records of the ranks that reported it
  // (any order, at most one per rank); registered ranks without a record
  // count as missing. Steps must close in increasing order.
  StepResult CloseStep(int64_t step, std::span<const RankStep> ranks);

  OnlineView View() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_ONLINE_DETECTOR_H_
