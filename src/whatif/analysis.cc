// SPDX-License-Identifier: Apache-2.0
#include "whatif/analysis.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "base/collective_ops.h"
#include "base/f32.h"
#include "base/parallel_for.h"
#include "base/str_format.h"
#include "whatif/robust_ideal.h"
#include "whatif/scenario_runner.h"
#include "whatif/selection.h"
#include "whatif/step_slice.h"
#include "whatif/worker_attribution.h"

// The analysis runs in three passes over the job's steps, a window of
// steps at a time: every result is per step until the means at the end,
// and steps never interact in a replay, so a job given in windows gets the
// bits of the job given whole (the in-memory Analyze is the one-window
// case). Only the pooled ideal values need every step before the replays
// against them: pass 1 (the traced replay, its self-test, the pools), the
// ideal replay, pass 2 (the decompositions and every worker's un-fix), the
// worker scores, pass 3 (the counterfactuals, which need the worst
// workers). With a collective, each process replays its share of the
// steps and the per-step series and pools are gathered after each pass, so
// every process holds the whole job's before the next one.

namespace strag::whatif {
namespace {

using graph::NodeId;

double Mean(const std::vector<double>& v) { return PairwiseMean(v); }

// Per-step times of one scenario, gathered window by window in step order.
struct StepSeries {
  std::vector<double> span, opt;
  void Append(const replay::StepTimes& t) {
    span.insert(span.end(), t.span.begin(), t.span.end());
    opt.insert(opt.end(), t.opt.begin(), t.opt.end());
  }
};

// A counterfactual replay to run: base values everywhere except on `x`.
struct Task {
  Base base;
  Selection x;
  replay::StepTimes times;  // the result (of the current window)
};

// Runs `tasks` on the runners (one per worker thread), all with the same
// costs, and appends each task's times to its series.
void RunTasks(std::vector<Task>* tasks, std::vector<ScenarioRunner>* runners,
              std::span<const double> traced, std::span<const double> ideal,
              std::vector<StepSeries>* series) {
  for (ScenarioRunner& r : *runners) r.SetCosts(traced, ideal);
  ParallelFor(tasks->size(), runners->size(), [&](size_t task, size_t worker) {
    Task& t = (*tasks)[task];
    t.times = (*runners)[worker].Run(t.base, t.x);
  });
  series->resize(tasks->size());
  for (size_t k = 0; k < tasks->size(); ++k) {
    (*series)[k].Append((*tasks)[k].times);
  }
}

// explain(X) of whatif-spec.md §7.7 from its two replays.
Counterfactual Explain(const std::string& label, const StepSeries& rem,
                       const StepSeries& add, double t_ori, double t_ideal) {
  Counterfactual c;
  c.selector = label;
  c.t_ori = t_ori;
  c.t_ideal = t_ideal;
  c.t_rem = Mean(rem.span);
  c.t_add = Mean(add.span);
  const double gap = t_ori - t_ideal;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.rem = gap != 0 ? (t_ori - c.t_rem) / gap : nan;
  c.add = gap != 0 ? (c.t_add - t_ideal) / gap : nan;
  return c;
}

// `t_ideal_opt` is the per-step ideal time (the same for every step),
// `mean_ideal_opt` its mean over the steps as the published tool computes it.
void AddGroup(const StepSeries& series, std::string key, double t_ideal_opt,
              double mean_ideal_opt, Decomposition* d) {
  d->keys.push_back(std::move(key));
  d->slowdown.push_back(Mean(series.opt) / mean_ideal_opt);
  std::vector<double> per_step(series.opt.size());
  for (size_t s = 0; s < per_step.size(); ++s) {
    per_step[s] = series.opt[s] / t_ideal_opt;
  }
  d->per_step.push_back(std::move(per_step));
}

// Eq. 2 and Eq. 4: the groups that are un-fixed one at a time in the ideal
// replay (op groups, DP ranks, stages), as selections of `t` (a window or
// the job: they depend only on the model and the instances' DP ranks), and
// where each goes in the result.
void DecompositionTasks(const PreparedTrace& t, WhatIfResult* r,
                        std::vector<Task>* tasks,
                        std::vector<std::pair<Decomposition*, std::string>>* keys) {
  for (int g = 0; g < trace::kNumOpGroups; ++g) {
    const auto group = static_cast<trace::OpGroup>(g);
    SelectionTerm term = AllOps(t);
    bool any = false;
    for (NodeId v = 0; v < t.num_nodes(); ++v) {
      term.nodes[v] = trace::GroupOf(t.model.keys[v].type) == group;
      any |= term.nodes[v] != 0;
    }
    if (!any) continue;
    tasks->push_back({Base::kIdeal, Selection{"", {std::move(term)}}, {}});
    keys->emplace_back(&r->by_optype, std::string(trace::OpGroupName(group)));
  }
  const bool ranks = t.layout == Layout::kRanks;
  for (int32_t d = 0; d < t.dp && !ranks; ++d) {
    SelectionTerm term = AllOps(t);
    for (size_t i = 0; i < term.instances.size(); ++i) {
      term.instances[i] =
          i % static_cast<size_t>(t.dp) == static_cast<size_t>(d);
    }
    tasks->push_back({Base::kIdeal, Selection{"", {std::move(term)}}, {}});
    keys->emplace_back(&r->by_dp_rank, std::to_string(d));
  }
  // Profiler traces: replicas and stages are sets of ranks.
  for (int32_t d = 0; d < t.topology.dp && ranks; ++d) {
    tasks->push_back({Base::kIdeal, SelectPlaces(t, -1, d), {}});
    keys->emplace_back(&r->by_dp_rank, std::to_string(d));
  }
  for (int32_t s = 0; s < t.topology.pp && ranks && t.topology.pp > 1; ++s) {
    tasks->push_back({Base::kIdeal, SelectPlaces(t, s, -1), {}});
    keys->emplace_back(&r->by_pipeline_stage, std::to_string(s));
  }
  for (int32_t s = 0; s < t.pp; ++s) {
    tasks->push_back({Base::kIdeal, SelectStage(t, s), {}});
    const int32_t key =
        t.layout == Layout::kRanks ? t.worker_rank[static_cast<size_t>(s)] : s;
    keys->emplace_back(&r->by_stage, std::to_string(key));
  }
}

// A worker's score: min(S_dp, S_pp) of its DP rank and stage (published);
// for profiler traces, the un-fix-only-this-rank slowdown itself.
void ScoreWorkers(const PreparedTrace& t, WhatIfResult* r) {
  for (const Worker& w : t.workers) {
    const double own = r->by_stage.slowdown[static_cast<size_t>(w.pp)];
    const double score =
        t.layout == Layout::kRanks
            ? own
            : std::min(r->by_dp_rank.slowdown[static_cast<size_t>(w.dp)], own);
    r->workers.push_back(WorkerScore{w.rank, w.dp, w.pp, score, own});
  }
  std::stable_sort(r->workers.begin(), r->workers.end(),
                   [](const WorkerScore& a, const WorkerScore& b) {
                     if (a.score != b.score) return a.score > b.score;
                     return a.rank < b.rank;
                   });
}

// Every worker's exact S_w = T_opt with only it un-fixed / ideal T_opt
// (for Layout::kMegatron, where min(S_dp, S_pp) only approximates it), from
// its per-step times ([worker index][step]).
void SetUnfixSlowdowns(const PreparedTrace& t,
                       const std::vector<std::vector<double>>& step_opt,
                       double mean_ideal_opt, WhatIfResult* r) {
  std::vector<size_t> index_of(static_cast<size_t>(t.dp) * t.pp);
  for (size_t k = 0; k < t.workers.size(); ++k) {
    index_of[static_cast<size_t>(t.workers[k].dp) * t.pp +
             static_cast<size_t>(t.workers[k].pp)] = k;
  }
  for (WorkerScore& w : r->workers) {
    const size_t k =
        index_of[static_cast<size_t>(w.dp) * t.pp + static_cast<size_t>(w.pp)];
    w.unfix_slowdown = Mean(step_opt[k]) / mean_ideal_opt;
  }
}

// The worst `percent`% of workers by score (at least one).
std::vector<Worker> WorstWorkers(const PreparedTrace& t, const WhatIfResult& r,
                                 int percent) {
  const auto p = static_cast<size_t>(std::max(1, percent));
  const size_t count = (p * t.workers.size() + 99) / 100;  // ceil
  std::vector<Worker> out;
  for (size_t k = 0; k < count && k < r.workers.size(); ++k) {
    out.push_back(Worker{r.workers[k].rank, r.workers[k].dp, r.workers[k].pp});
  }
  return out;
}

// What a counterfactual is reported as.
enum class Role : uint8_t { kWorstWorkers, kLastStage, kFix, kUnfix };

// Step 1: the --fix / --unfix selections over the whole job, parsed first so
// that a bad one fails before any replay.
Result<std::vector<Selection>> ParseSelections(const PreparedTrace& t,
                                               const WhatIfOptions& options) {
  std::vector<Selection> out;
  for (const auto* list : {&options.fix, &options.unfix}) {
    for (const std::string& text : *list) {
      ASSIGN_OR_RETURN(Selection x, ParseSelection(text, t));
      out.push_back(std::move(x));
    }
  }
  return out;
}

// Step 2 (§6.1) for one window: the traced durations replayed without
// launch delays; the replayed durations D_nd of plain ops become the
// counterfactuals' traced costs (returned).
BigVector<double> TracedNoDelay(const PreparedTrace& w, ScenarioRunner* main,
                                replay::StepTimes* times) {
  const size_t n = w.num_nodes(), inst = w.num_instances();
  main->Retarget(w);
  main->SetCosts(w.cost, {});
  // Lanes are instances here: window lane lo + l is instance lo + l.
  BigVector<double> cost_nd(w.cost);
  *times = main->RunTraced({}, [&](const replay::WindowTimes& x) {
    for (NodeId v = 0; v < n; ++v) {
      if (w.model.graph.is_comm(v)) continue;
      const double* s = x.start + v * x.stride;
      const double* e = x.end + v * x.stride;
      double* o = cost_nd.data() + v * inst + x.lo;
      for (size_t l = 0; l < x.lanes; ++l) o[l] = e[l] - s[l];
    }
  });
  return cost_nd;
}

// The self-test: with the measured launch delays the replay gives the
// trace back; its largest error.
double SelfTestError(const PreparedTrace& w, ScenarioRunner* main) {
  const size_t n = w.num_nodes(), inst = w.num_instances();
  main->Retarget(w);
  main->SetCosts(w.cost, {});
  double error = 0;
  main->RunTraced(w.launch_delay, [&](const replay::WindowTimes& x) {
    for (NodeId v = 0; v < n; ++v) {
      const double* s = x.start + v * x.stride;
      const float* traced = w.start.data() + v * inst + x.lo;
      for (size_t l = 0; l < x.lanes; ++l) {
        error = std::max(error, std::abs(s[l] - static_cast<double>(traced[l])));
      }
    }
  });
  return error;
}

// Step 3 (§6.2): T_ideal, every op at its pooled ideal value, replayed
// once (one lane: the ideal step is the same for every step).
struct IdealReplay {
  std::vector<double> node_cost;  // the pooled ideal input per node
  std::vector<double> cost;       // plain ops: replayed D_id
  double span = 0, opt = 0;
};

Result<IdealReplay> ReplayIdeal(const PreparedTrace& shape,
                                std::vector<double> node_cost,
                                ScenarioRunner* main) {
  IdealReplay out;
  out.node_cost = std::move(node_cost);
  main->Retarget(shape);
  main->SetCosts({}, out.node_cost);
  const replay::StepTimes id = main->RunIdealLane();
  out.cost = out.node_cost;
  for (NodeId v = 0; v < shape.num_nodes(); ++v) {
    if (!shape.model.graph.is_comm(v)) {
      out.cost[v] = main->times().end[v] - main->times().start[v];
    }
  }
  out.span = id.span[0];
  out.opt = id.opt[0];
  if (!(out.opt > 0) || !std::isfinite(out.opt)) {
    return InvalidInput("the ideal step time is " + std::to_string(out.opt) +
                        " s: every op of the trace has zero duration");
  }
  return out;
}

// Step 4: S, the waste, the launch slowdown, per step and overall, and the
// ideal value of each op type (published pool).
void Slowdowns(const PreparedTrace& t, const StepSeries& nd,
               const std::vector<float>& step_t_base, const IdealReplay& ideal,
               IdealPool pool, WhatIfResult* r) {
  r->step_t_replayed = nd.span;
  r->step_t_ideal.assign(t.steps.size(), ideal.span);
  // The mean of the per-step ideal series (all equal), summed as the
  // published tool sums it: not always bit-equal to the value itself.
  const double mean_ideal_opt =
      Mean(std::vector<double>(t.steps.size(), ideal.opt));
  r->slowdown = Mean(nd.span) / mean_ideal_opt;
  r->waste = 1.0 - 1.0 / r->slowdown;
  r->launch_slowdown =
      static_cast<double>(PairwiseMeanF32(step_t_base)) / Mean(nd.opt);
  for (size_t s = 0; s < t.steps.size(); ++s) {
    r->slowdown_per_step.push_back(nd.span[s] / ideal.opt);
    r->launch_slowdown_per_step.push_back(
        static_cast<double>(step_t_base[s]) / nd.opt[s]);
  }
  for (NodeId v = 0; v < t.num_nodes() && pool == IdealPool::kOpType; ++v) {
    const std::string name(trace::OpTypeName(t.model.keys[v].type));
    if (std::none_of(r->ideal.begin(), r->ideal.end(),
                     [&](const IdealValue& x) { return x.op_type == name; })) {
      r->ideal.push_back(IdealValue{name, ideal.node_cost[v]});
    }
  }
}

// The analysis of one job over its windows (see the top of the file).
class WindowedAnalysis {
 public:
  WindowedAnalysis(const PreparedTrace& shape, WindowSource* windows,
                   const WhatIfOptions& options)
      : shape_(shape),
        windows_(windows),
        options_(options),
        c_(options.collective && options.collective->size() > 1
               ? options.collective
               : nullptr),
        share_(c_ ? ShareOf(shape.steps.size(), c_->rank(), c_->size())
                  : Share{0, shape.steps.size()}) {}

  Result<WhatIfResult> Run();

 private:
  // Calls fn(window, first instance) for every window, checking that the
  // windows tile the job's steps in order.
  Status EachWindow(
      const std::function<Status(const PreparedTrace&, size_t)>& fn);
  Status TracedPass();
  Status DecompositionPass();
  Status CounterfactualPass(const std::vector<Worker>& worst);
  // The whole job's series from every process's share (no-ops alone).
  Status GatherSeries(std::vector<StepSeries>* series);
  Status GatherPools(IdealPools* pools);
  Status GatherRoleCosts(const BigVector<double>& cost_nd);

  const PreparedTrace& shape_;
  WindowSource* windows_;
  const WhatIfOptions& options_;
  Collective* const c_;  // null: this process alone
  Share share_;          // this process's steps
  std::vector<ScenarioRunner> runners_;
  WhatIfResult r_;
  std::vector<Selection> selected_;  // --fix and --unfix, over the job
  StepSeries traced_;                // T (no launch delays) per step
  BigVector<double> only_cost_nd_;  // D_nd, kept while one window is all
  size_t windows_seen_ = 0;
  std::vector<float> step_t_base_;   // observed step times
  std::vector<double> node_cost_;    // pooled ideal values
  IdealReplay ideal_;
  double mean_ideal_opt_ = 0;
  std::vector<std::vector<double>> unfix_opt_;  // [worker][step]
  std::vector<StepSeries> decomposition_, counterfactual_;
  std::vector<std::pair<Decomposition*, std::string>> decomposition_keys_;
  std::vector<std::pair<Role, std::string>> scenarios_;  // role, label
};

Status WindowedAnalysis::EachWindow(
    const std::function<Status(const PreparedTrace&, size_t)>& fn) {
  size_t next_step = share_.first;
  RETURN_IF_ERROR(windows_->ForEachWindow([&](const PreparedTrace& w) {
    const bool fits =
        w.dp == shape_.dp && w.num_nodes() == shape_.num_nodes() &&
        next_step + w.steps.size() <= share_.end &&
        std::equal(w.steps.begin(), w.steps.end(),
                   shape_.steps.begin() + static_cast<ptrdiff_t>(next_step));
    if (!fits) {
      return Internal("analysis windows do not tile the job's steps in order");
    }
    const size_t first = next_step * static_cast<size_t>(shape_.dp);
    next_step += w.steps.size();
    return fn(w, first);
  }));
  if (next_step != share_.end) {
    return Internal("analysis windows do not cover the job's steps");
  }
  return Status::Ok();
}

// Pass 1: T and the self-test per window, the no-delay costs into the
// pools (kRole: the whole job is one window, pooled from it directly).
Status WindowedAnalysis::TracedPass() {
  const bool role = options_.pool == IdealPool::kRole;
  std::optional<IdealPools> pools;
  if (!role) pools.emplace(shape_, options_.pool);
  // The two traced replays of a window are independent: side by side on
  // two runners when there are two (the no-delay costs go into the pools
  // while the self-test still runs).
  ScenarioRunner* main = &runners_.front();
  ScenarioRunner* second = &runners_[std::min<size_t>(1, runners_.size() - 1)];
  RETURN_IF_ERROR(EachWindow([&](const PreparedTrace& w, size_t first) {
    replay::StepTimes times;
    BigVector<double> cost_nd;
    double self_test_error = 0;
    ParallelFor(2, main == second ? 1 : 2, [&](size_t task, size_t) {
      if (task == 0) {
        cost_nd = TracedNoDelay(w, main, &times);
        if (!role) pools->Add(w, first, cost_nd);
      } else {
        self_test_error = SelfTestError(w, second);
      }
    });
    traced_.Append(times);
    r_.self_test_max_error_s =
        std::max(r_.self_test_max_error_s, self_test_error);
    step_t_base_.insert(step_t_base_.end(), w.step_t_base.begin(),
                        w.step_t_base.end());
    const bool whole = w.steps.size() == shape_.steps.size();
    if (role && whole) {
      node_cost_ = RoleIdealCosts(w, cost_nd);
    } else if (role && c_ && w.steps.size() == share_.end - share_.first &&
               !shape_.cost.empty()) {
      const Status gathered = GatherRoleCosts(cost_nd);
      if (!gathered.ok()) return gathered;
    } else if (role) {
      return InvalidInput(
          "the role pool needs the whole trace at once; analyse it in one "
          "window or choose another --pool");
    }
    // One window: pass 3 takes these costs instead of replaying again.
    if (++windows_seen_ == 1) {
      only_cost_nd_ = std::move(cost_nd);
    } else {
      only_cost_nd_ = {};
    }
    return Status::Ok();
  }));
  std::vector<StepSeries> traced = {std::move(traced_)};
  RETURN_IF_ERROR(GatherSeries(&traced));
  traced_ = std::move(traced.front());
  if (c_) {
    RETURN_IF_ERROR(AllGatherConcat<float>(c_, {&step_t_base_}));
    ASSIGN_OR_RETURN(const std::vector<double> errors,
                     AllGatherValue(c_, r_.self_test_max_error_s));
    r_.self_test_max_error_s = *std::max_element(errors.begin(), errors.end());
  }
  if (!role) {
    RETURN_IF_ERROR(GatherPools(&*pools));
    node_cost_ = pools->NodeCosts(runners_.size());
  }
  return Status::Ok();
}

Status WindowedAnalysis::GatherSeries(std::vector<StepSeries>* series) {
  if (!c_) return Status::Ok();
  std::vector<std::vector<double>*> all;
  for (StepSeries& s : *series) {
    all.push_back(&s.span);
    all.push_back(&s.opt);
  }
  return AllGatherConcat<double>(c_, all);
}

// Every process's pools merged into each one's (the merge of a sum's parts
// is exact in any order, a median's values are a multiset).
Status WindowedAnalysis::GatherPools(IdealPools* pools) {
  if (!c_) return Status::Ok();
  ASSIGN_OR_RETURN(const std::vector<std::string> all,
                   c_->AllGather(pools->Export()));
  for (size_t p = 0; p < all.size(); ++p) {
    if (p != c_->rank()) RETURN_IF_ERROR(pools->Merge(all[p]));
  }
  return Status::Ok();
}

// The role pool screens every step of a stage at once: the processes' D_nd
// (each [node * its instances + instance]) laid out as the whole job's.
Status WindowedAnalysis::GatherRoleCosts(const BigVector<double>& cost_nd) {
  BytePacker mine;
  mine.PutArray<double>(cost_nd);
  ASSIGN_OR_RETURN(const std::vector<std::string> all,
                   c_->AllGather(mine.Take()));
  const size_t nodes = shape_.num_nodes(), total = shape_.num_instances();
  const auto dp = static_cast<size_t>(shape_.dp);
  BigVector<double> whole(nodes * total);
  for (size_t p = 0; p < all.size(); ++p) {
    const Share s = ShareOf(shape_.steps.size(), p, all.size());
    const size_t first = s.first * dp, n = (s.end - s.first) * dp;
    ByteUnpacker in(all[p]);
    const std::vector<double> part = in.GetArray<double>();
    if (!in.done() || part.size() != nodes * n) {
      return Internal("the role pool's gathered costs do not fit the job");
    }
    for (size_t v = 0; v < nodes; ++v) {
      std::copy_n(part.begin() + static_cast<ptrdiff_t>(v * n), n,
                  whole.begin() + static_cast<ptrdiff_t>(v * total + first));
    }
  }
  node_cost_ = RoleIdealCosts(shape_, whole);
  return Status::Ok();
}

// Pass 2: the decompositions restore traced durations (not D_nd), in the
// ideal replay; every worker's own un-fix too (Layout::kMegatron).
Status WindowedAnalysis::DecompositionPass() {
  const bool megatron = shape_.layout == Layout::kMegatron;
  if (megatron) unfix_opt_.assign(shape_.workers.size(), {});
  RETURN_IF_ERROR(EachWindow([&](const PreparedTrace& w, size_t /*first*/) {
    for (ScenarioRunner& runner : runners_) runner.Retarget(w);
    std::vector<Task> tasks;
    std::vector<std::pair<Decomposition*, std::string>> keys;
    DecompositionTasks(w, &r_, &tasks, &keys);
    if (decomposition_keys_.empty()) decomposition_keys_ = std::move(keys);
    RunTasks(&tasks, &runners_, w.cost, ideal_.cost, &decomposition_);
    if (!megatron) return Status::Ok();
    ASSIGN_OR_RETURN(const WorkerUnfix unfix,
                     UnfixEachWorker(w, w.cost, ideal_.cost,
                                     {.threads = runners_.size()}));
    const size_t steps = w.steps.size();
    for (size_t k = 0; k < unfix_opt_.size(); ++k) {
      const auto from =
          unfix.step_opt_s.begin() + static_cast<ptrdiff_t>(k * steps);
      unfix_opt_[k].insert(unfix_opt_[k].end(), from,
                           from + static_cast<ptrdiff_t>(steps));
    }
    return Status::Ok();
  }));
  RETURN_IF_ERROR(GatherSeries(&decomposition_));
  if (!c_ || !megatron) return Status::Ok();
  std::vector<std::vector<double>*> unfix;
  for (std::vector<double>& u : unfix_opt_) unfix.push_back(&u);
  return AllGatherConcat<double>(c_, unfix);
}

// Pass 3 (§7.7): fix only / un-fix only each scenario (the worst workers,
// the last stage, each --fix and --unfix), each against the traced (D_nd)
// and the ideal base.
Status WindowedAnalysis::CounterfactualPass(const std::vector<Worker>& worst) {
  const bool ranks = shape_.layout == Layout::kRanks;
  // "The last stage" means nothing without a pipeline layout.
  const bool last_stage = !ranks || shape_.topology.pp > 1;
  scenarios_.emplace_back(Role::kWorstWorkers,
                          SelectWorkers(shape_, worst).label);
  if (last_stage) {
    scenarios_.emplace_back(
        Role::kLastStage,
        (ranks ? SelectPlaces(shape_, shape_.topology.pp - 1, -1)
               : SelectStage(shape_, shape_.pp - 1))
            .label);
  }
  for (size_t k = 0; k < selected_.size(); ++k) {
    scenarios_.emplace_back(k < options_.fix.size() ? Role::kFix : Role::kUnfix,
                            selected_[k].label);
  }
  RETURN_IF_ERROR(EachWindow([&](const PreparedTrace& w, size_t first) {
    std::vector<Selection> xs;
    xs.push_back(SelectWorkers(w, worst));
    if (last_stage) {
      xs.push_back(ranks ? SelectPlaces(w, shape_.topology.pp - 1, -1)
                         : SelectStage(w, w.pp - 1));
    }
    for (const Selection& x : selected_) {
      xs.push_back(SliceInstances(x, first, w.num_instances()));
    }
    BigVector<double> replayed;
    const bool kept = windows_seen_ == 1;
    if (!kept) {
      replay::StepTimes unused;
      replayed = TracedNoDelay(w, &runners_.front(), &unused);
    }
    const BigVector<double>& cost_nd = kept ? only_cost_nd_ : replayed;
    for (ScenarioRunner& runner : runners_) runner.Retarget(w);
    std::vector<Task> tasks;
    for (Selection& x : xs) {
      tasks.push_back({Base::kTraced, x, {}});
      tasks.push_back({Base::kIdeal, std::move(x), {}});
    }
    RunTasks(&tasks, &runners_, cost_nd, ideal_.cost, &counterfactual_);
    return Status::Ok();
  }));
  return GatherSeries(&counterfactual_);
}

Result<WhatIfResult> WindowedAnalysis::Run() {
  const PreparedTrace& t = shape_;
  r_.layout = t.layout;
  r_.dp = t.dp, r_.pp = t.pp, r_.vpp = t.vpp;
  r_.topology = t.topology;
  r_.num_ops = t.num_nodes() * t.num_instances();
  r_.steps = t.steps;
  ASSIGN_OR_RETURN(selected_, ParseSelections(t, options_));
  if (c_ && c_->size() > t.steps.size()) {
    return InvalidInput(StrFormat(
        "%zu processes for a job of %zu steps: run at most one per step",
        c_->size(), t.steps.size()));
  }
  // One runner (replay workspace) per thread, reused by every scenario.
  const size_t threads =
      options_.threads ? options_.threads : HardwareThreads();
  runners_.reserve(threads);
  for (size_t k = 0; k < threads; ++k) runners_.emplace_back(t);

  RETURN_IF_ERROR(TracedPass());
  r_.step_t_observed.assign(step_t_base_.begin(), step_t_base_.end());
  const uint64_t before_ideal = runners_.front().replayed_ops();
  ASSIGN_OR_RETURN(ideal_,
                   ReplayIdeal(t, std::move(node_cost_), &runners_.front()));
  const uint64_t ideal_ops = runners_.front().replayed_ops() - before_ideal;
  r_.ideal_node_cost = ideal_.node_cost;
  Slowdowns(t, traced_, step_t_base_, ideal_, options_.pool, &r_);
  mean_ideal_opt_ = Mean(std::vector<double>(t.steps.size(), ideal_.opt));

  RETURN_IF_ERROR(DecompositionPass());
  for (size_t k = 0; k < decomposition_keys_.size(); ++k) {
    AddGroup(decomposition_[k], std::move(decomposition_keys_[k].second),
             ideal_.opt, mean_ideal_opt_, decomposition_keys_[k].first);
  }
  ScoreWorkers(t, &r_);
  if (t.layout == Layout::kMegatron) {
    SetUnfixSlowdowns(t, unfix_opt_, mean_ideal_opt_, &r_);
  }

  const std::vector<Worker> worst =
      WorstWorkers(t, r_, options_.worst_worker_percent);
  RETURN_IF_ERROR(CounterfactualPass(worst));
  const double t_ori = Mean(traced_.span);
  const double mean_ideal_span = Mean(r_.step_t_ideal);
  for (size_t k = 0; k < scenarios_.size(); ++k) {
    Counterfactual c =
        Explain(scenarios_[k].second, counterfactual_[2 * k],
                counterfactual_[2 * k + 1], t_ori, mean_ideal_span);
    switch (scenarios_[k].first) {
      case Role::kWorstWorkers:
        for (const Worker& w : worst) c.ranks.push_back(w.rank);
        r_.fix_worst_workers = std::move(c);
        break;
      case Role::kLastStage:
        for (const trace::RankPlace& w : t.topology.places) {
          if (w.pp == t.topology.pp - 1) c.ranks.push_back(w.rank);
        }
        r_.fix_last_stage = std::move(c);
        break;
      case Role::kFix:
      case Role::kUnfix:
        c.unfix = scenarios_[k].first == Role::kUnfix;
        r_.selected.push_back(std::move(c));
        break;
    }
  }
  for (const ScenarioRunner& runner : runners_) {
    r_.replayed_ops += runner.replayed_ops();
  }
  if (c_) {
    // Every process replays the same ideal step: it counts once.
    const uint64_t mine =
        r_.replayed_ops - (c_->rank() == 0 ? 0 : ideal_ops);
    ASSIGN_OR_RETURN(const std::vector<uint64_t> ops,
                     AllGatherValue<uint64_t>(c_, mine));
    r_.replayed_ops = 0;
    for (uint64_t n : ops) r_.replayed_ops += n;
  }
  return std::move(r_);
}

}  // namespace

std::string_view LayoutName(Layout layout) {
  return layout == Layout::kRanks ? "ranks" : "megatron";
}

int64_t WorldSize(const WhatIfResult& r, const trace::JobMeta& meta) {
  if (r.layout == Layout::kRanks) {
    return std::max<int64_t>(meta.world_size, static_cast<int64_t>(r.pp));
  }
  trace::JobMeta shape = meta;
  shape.dp = r.dp;
  shape.pp = r.pp;
  return shape.WorldSize();
}

Result<WhatIfResult> AnalyzeWindows(const PreparedTrace& shape,
                                    WindowSource* windows,
                                    const WhatIfOptions& options) {
  return WindowedAnalysis(shape, windows, options).Run();
}

Result<WhatIfResult> Analyze(const PreparedTrace& t,
                             const WhatIfOptions& options) {
  Collective* c = options.collective;
  if (c == nullptr || c->size() <= 1 || c->size() > t.steps.size()) {
    // More processes than steps (a capture of one step): each process
    // analyses the whole job alone, the same result with no exchange.
    WhatIfOptions alone = options;
    alone.collective = nullptr;
    WholeJob whole(t);
    return AnalyzeWindows(t, &whole, alone);
  }
  const Share share = ShareOf(t.steps.size(), c->rank(), c->size());
  const PreparedTrace mine = SliceSteps(t, share.first, share.end - share.first);
  WholeJob window(mine);
  return AnalyzeWindows(t, &window, options);
}

}  // namespace strag::whatif
