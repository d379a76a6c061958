// SPDX-License-Identifier: Apache-2.0
// The what-if analysis of a traced job (whatif-spec.md §6-§7): replay the
// trace without launch delays (T), replay it with idealised durations
// (T_ideal), and attribute the difference with counterfactuals.
//
// Usage:
//   ASSIGN_OR_RETURN(PreparedTrace trace, PrepareTrace(table, meta));
//   ASSIGN_OR_RETURN(WhatIfResult r, Analyze(trace, {}));
//   r.slowdown;  // S = mean(T) / mean(T_ideal)

#ifndef STRAG_SRC_WHATIF_ANALYSIS_H_
#define STRAG_SRC_WHATIF_ANALYSIS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/collective.h"
#include "base/status.h"
#include "trace/job_meta.h"
#include "whatif/ideal_pools.h"
#include "whatif/prepared_trace.h"

namespace strag::whatif {

struct WhatIfOptions {
  IdealPool pool = IdealPool::kOpType;
  int32_t worst_worker_percent = 3;  // M_W fixes the worst ceil(3%) workers
  // Threads for the independent counterfactual replays (0: one per core).
  // Results do not depend on it.
  size_t threads = 0;
  std::vector<std::string> fix;    // selectors, reported as counterfactuals
  std::vector<std::string> unfix;  // same sets, "un-fix only X" emphasised
  // The processes analysing this job together (MPI: src/dist/), each
  // replaying its share of the steps (base/collective.h's ShareOf); null:
  // this process alone. Results do not depend on it, bit for bit.
  Collective* collective = nullptr;
};

// "Un-fix only this group" slowdowns: S_g = mean(T_g) / mean(T_ideal).
struct Decomposition {
  std::vector<std::string> keys;  // group names ("3", "forward-compute")
  std::vector<double> slowdown;   // per key
  std::vector<std::vector<double>> per_step;  // [key][step]
};

// explain(X) of whatif-spec.md §7.7. Times are mean step times, s.
struct Counterfactual {
  std::string selector;
  bool unfix = false;          // requested as --unfix
  std::vector<int32_t> ranks;  // for worker selections
  double t_ori = 0, t_ideal = 0, t_rem = 0, t_add = 0;
  double rem = 0;  // (t_ori - t_rem) / (t_ori - t_ideal): fix only X
  double add = 0;  // (t_add - t_ideal) / (t_ori - t_ideal): un-fix only X
};

struct WorkerScore {
  int32_t rank = 0, dp = 0, pp = 0;
  double score = 0;  // min(S_dp[dp], S_pp[pp]) (published; ranks M_W)
  // S_w: the slowdown with only this worker's ops un-fixed, exactly (the
  // decompositions' convention: traced durations, T_opt); the same as
  // `score` for Layout::kRanks, where a stage is one rank.
  double unfix_slowdown = 0;
};

struct IdealValue {
  std::string op_type;
  double value_s = 0;  // mean (compute) or median transfer (communication)
};

struct WhatIfResult {
  Layout layout = Layout::kMegatron;
  // Layout::kRanks: by_stage is by rank (keys are global ranks), by_dp_rank
  // by DP replica of the topology, by_pipeline_stage by its PP stage (when
  // it has several), and fix_last_stage is the topology's last stage (empty
  // selector with one stage). by_pipeline_stage is empty for kMegatron.
  int32_t dp = 0, pp = 0, vpp = 1;
  size_t num_ops = 0;
  std::vector<int64_t> steps;
  std::vector<double> step_t_observed;  // traced (binary32 value), s
  std::vector<double> step_t_replayed;  // T: replay without launch delays
  std::vector<double> step_t_ideal;     // T_ideal
  double slowdown = 0;                  // S
  double waste = 0;                     // 1 - 1/S
  double launch_slowdown = 0;           // mean(observed) / mean(T)
  std::vector<double> slowdown_per_step;
  std::vector<double> launch_slowdown_per_step;
  Decomposition by_optype, by_dp_rank, by_stage, by_pipeline_stage;
  trace::Topology topology;  // the trace's, for reports
  std::vector<WorkerScore> workers;  // sorted by score, worst first
  Counterfactual fix_worst_workers;  // rem = M_W
  Counterfactual fix_last_stage;     // rem = M_S
  std::vector<Counterfactual> selected;
  std::vector<IdealValue> ideal;
  std::vector<double> ideal_node_cost;  // per node: the ideal replay's input
  double self_test_max_error_s = 0;  // replay with launch delays vs trace
  uint64_t replayed_ops = 0;         // ops x lanes over every replay
};

// "megatron" or "ranks", as reports name the layout.
std::string_view LayoutName(Layout layout);

// The job's world size for reports: the metadata's, else dp * pp * tp * cp
// with the traced dp and pp (Megatron); at least the traced ranks (ranks).
int64_t WorldSize(const WhatIfResult& result, const trace::JobMeta& meta);

Result<WhatIfResult> Analyze(const PreparedTrace& trace,
                             const WhatIfOptions& options);

// A job given a window of consecutive steps at a time, each window a
// PreparedTrace of the same model (PrepareTraceWindow), for jobs too large
// to prepare at once. The analysis goes over the windows three times.
class WindowSource {
 public:
  virtual ~WindowSource() = default;
  // Calls `fn` with every window, in step order, and returns its first
  // error.
  virtual Status ForEachWindow(
      const std::function<Status(const PreparedTrace&)>& fn) = 0;
};

// The whole job as its one window (what Analyze gives AnalyzeWindows).
class WholeJob : public WindowSource {
 public:
  explicit WholeJob(const PreparedTrace& t) : t_(t) {}
  Status ForEachWindow(
      const std::function<Status(const PreparedTrace&)>& fn) override {
    return fn(t_);
  }

 private:
  const PreparedTrace& t_;
};

// Analyze on a job given in windows: the same result, bit for bit, as
// Analyze on the whole job (steps never interact in a replay, and every
// pooled value is summed in the whole job's order). `shape` holds the job's
// layout, model, dp, pp, vpp, every step, workers and topology (its
// per-slot arrays are not read). The role pool needs one window. With
// options.collective, `windows` are this process's share of the steps
// (ShareOf(steps, rank, size)), and the role pool needs `shape`'s per-slot
// arrays.
Result<WhatIfResult> AnalyzeWindows(const PreparedTrace& shape,
                                    WindowSource* windows,
                                    const WhatIfOptions& options);

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_ANALYSIS_H_
