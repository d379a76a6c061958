// SPDX-License-Identifier: Apache-2.0
// StepJudge: the per-step maths of live-monitoring.md §4.1-§4.2 for one
// closed step. TP members of a (PP stage, DP replica) cell collapse to
// their max busy time; cells of one PP stage are a peer group. Per group:
// median and MAD of busy time B = step - time in collectives, robust z,
// lateness B - median, the last arriver (argmax B; cross-checked with the
// collective inversion argmin D_dp), and the excesses of data, GC and
// compute over the peers' medians. In groups of fewer than 4 cells being
// last is a 1/|G| event, so the last arriver is implicated only beyond the
// group's own noise, and each cell is also judged against its OwnBaseline
// (log busy time), less the job's common drift (the lower median of log
// busy / baseline over those cells, smoothed over 9 steps): a rank that
// became slower is found even without peers, a job-wide slowdown is not a
// straggler. Job-level: worker excess X^w, stage excess X^s under 1F1B,
// the hot stage, Pearson r(busy, sum_s2), and the transfer time of each
// collective kind (the least D_g of a group) against its baseline.
//
// Buffers are reused across steps: O(cells) per step, no allocation once
// warm.

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_STEP_JUDGE_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_STEP_JUDGE_H_

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "diagnose/online/online_detector.h"
#include "diagnose/online/own_baseline.h"
#include "diagnose/online/rank_table.h"
#include "diagnose/online/rolling_reference.h"
#include "diagnose/online/window.h"

namespace strag::diagnose::online {

// A judged cell in this step (floats: 100k of them are written and read
// a few times a step; 7 significant digits are plenty for ns of a step).
struct CellFacts {
  int32_t cell = 0, rank_index = 0, record = 0, stage = 0;
  float busy = 0, lateness = 0, z = 0, ratio = 1;
  float gc = 0, data = 0, compute = 0, tokens = 0, s2 = 0;  // its record's
  float gc_x = 0, data_x = 0, compute_x = 0;  // ns over the reference
  uint8_t bits = 0, member = 0;
};

struct JudgeInput {
  std::span<const RankStep> records;
  std::span<const int32_t> index;   // rank index per record, -1: skip
  std::span<const uint8_t> judged;  // per record
  int64_t step_ns = 0;              // T, observed
};

class StepJudge {
 public:
  static constexpr size_t kDriftSteps = 9;

  explicit StepJudge(const OnlineOptions& options) : options_(options) {}

  // Judges one step, puts every judged cell's entry into the window's open
  // step and fills `job` (all but step and t_ns).
  void Run(const RankTable& table, const JudgeInput& in, Window* window,
           JobStep* job);

  std::span<const CellFacts> cells() const { return facts_; }
  // Median busy of each stage index this step, ns; -1 for none.
  std::span<const double> stage_median() const { return stage_med_; }
  int32_t last_rank() const { return last_rank_; }  // rank index, -1
  double last_lateness() const { return last_lateness_; }
  double sync_wait_ns() const { return sync_wait_ns_; }  // per cell

 private:
  struct Stage {
    int32_t begin = 0, end = 0;  // range in facts_
    double med = 0, sigma = 0, gc = 0, data = 0, compute = 0;
    double tokens = 0, s2 = 0;
    std::array<double, trace::kCollGroups> transfer{};  // -1: unused
    int32_t last = -1, inverted = -1;                   // indexes in facts_
  };

  void CollectCells(const RankTable& table, const JudgeInput& in);
  void GroupByStage(const RankTable& table, const JudgeInput& in);
  void StageStatistics(const JudgeInput& in, Stage* s);
  void Arrivals(const JudgeInput& in, Stage* s);
  void JudgeStage(const Stage& s);
  void JudgeIndividually(const Window& window);
  double Drift();  // log units
  void JudgeSmallStage(const Stage& s, double log_drift, const Window& window);
  void JudgeOwn(double log_drift, const Window& window, CellFacts* f);
  void Finish(const RankTable& table, const JudgeInput& in, Window* window,
              JobStep* job);
  void StageExcess(JobStep* job);
  void Transfers(const Window& window, JobStep* job);
  double Floor() const;
  double MedianOf(const Stage& s, float CellFacts::*field, bool given);
  OwnBaseline& OwnBaselineOf(int32_t cell);

  const OnlineOptions& options_;
  uint64_t serial_ = 0;
  int64_t step_ns_ = 0;
  // Per cell, reused: the step the cell was last filled, its record.
  std::vector<uint64_t> cell_stamp_;
  std::vector<int32_t> cell_record_;
  std::vector<double> cell_busy_;
  std::vector<int32_t> judged_cells_, counts_;
  std::vector<CellFacts> facts_;
  std::vector<Stage> stages_;
  std::vector<double> stage_med_, scratch_;
  std::vector<int32_t> ref_of_cell_;
  std::vector<OwnBaseline> refs_;
  std::array<double, kDriftSteps> drifts_{};  // raw log drifts, a ring
  size_t drift_next_ = 0;
  // [stage index][collective kind]
  std::vector<std::array<RollingReference, trace::kCollGroups>> transfer_ref_;
  int32_t last_rank_ = -1;
  double last_lateness_ = 0, sync_wait_ns_ = 0;
  double worker_ns_ = 0, host_ns_ = 0;
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_STEP_JUDGE_H_
