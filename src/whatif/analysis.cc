// SPDX-License-Identifier: Apache-2.0
#include "whatif/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/f32.h"
#include "base/median.h"
#include "base/parallel_for.h"
#include "whatif/robust_ideal.h"
#include "whatif/scenario_runner.h"
#include "whatif/selection.h"
#include "whatif/worker_attribution.h"

namespace strag::whatif {
namespace {

using graph::NodeId;

double Mean(const std::vector<double>& v) { return PairwiseMean(v); }

// Pool index of every node under `pool`.
std::vector<size_t> PoolOfNodes(const PreparedTrace& t, IdealPool pool) {
  std::map<std::pair<int, int32_t>, size_t> ids;
  std::vector<size_t> out(t.num_nodes());
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    const graph::OpKey& k = t.model.keys[v];
    const int type = static_cast<int>(k.type);
    switch (pool) {
      case IdealPool::kOpType:
        out[v] = ids.emplace(std::pair{type, 0}, ids.size()).first->second;
        break;
      case IdealPool::kOpTypeStage:
        out[v] =
            ids.emplace(std::pair{type, k.stage}, ids.size()).first->second;
        break;
      case IdealPool::kOp:
        out[v] = v;
        break;
      case IdealPool::kRole:  // handled by RoleIdealCosts
      case IdealPool::kPosition:
        out[v] =
            ids.emplace(std::pair{type, k.seq_id}, ids.size()).first->second;
        break;
    }
  }
  return out;
}

// whatif-spec.md §6.2: the ideal cost of every node. Compute types take the
// mean of the no-delay replayed durations, communication types the median
// (transfer times rounded to binary32 for comm ops).
std::vector<double> IdealCosts(const PreparedTrace& t,
                               std::span<const double> cost_nd,
                               IdealPool pool) {
  if (pool == IdealPool::kRole) return RoleIdealCosts(t, cost_nd);
  const size_t inst = t.num_instances();
  const std::vector<size_t> pool_of = PoolOfNodes(t, pool);
  const size_t num_pools =
      *std::max_element(pool_of.begin(), pool_of.end()) + 1;
  // Values per (pool, comm?) since comm ops of a pool use transfer times.
  std::vector<std::vector<double>> values(2 * num_pools);
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    auto& bucket = values[2 * pool_of[v] + (t.model.graph.is_comm(v) ? 1 : 0)];
    bucket.insert(bucket.end(),
                  cost_nd.begin() + static_cast<ptrdiff_t>(v * inst),
                  cost_nd.begin() + static_cast<ptrdiff_t>((v + 1) * inst));
  }
  std::vector<double> pooled(values.size());
  for (size_t p = 0; p < num_pools; ++p) {
    // The op type decides the statistic; every node of a pool has one type.
    const NodeId any = static_cast<NodeId>(
        std::find(pool_of.begin(), pool_of.end(), p) - pool_of.begin());
    const bool comm_class = trace::IsIdealisedAsComm(t.model.keys[any].type);
    pooled[2 * p] = comm_class ? Median(&values[2 * p]) : Mean(values[2 * p]);
    pooled[2 * p + 1] = Fl32(Median(&values[2 * p + 1]));
  }
  std::vector<double> ideal(t.num_nodes());
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    ideal[v] = pooled[2 * pool_of[v] + (t.model.graph.is_comm(v) ? 1 : 0)];
  }
  return ideal;
}

// A counterfactual replay to run: base values everywhere except on `x`.
struct Task {
  Base base;
  Selection x;
  replay::StepTimes times;  // the result
};

// Runs `tasks` on the runners (one per worker thread), all with the same
// costs.
void RunTasks(std::vector<Task>* tasks, std::vector<ScenarioRunner>* runners,
              std::span<const double> traced, std::span<const double> ideal) {
  for (ScenarioRunner& r : *runners) r.SetCosts(traced, ideal);
  ParallelFor(tasks->size(), runners->size(), [&](size_t task, size_t worker) {
    Task& t = (*tasks)[task];
    t.times = (*runners)[worker].Run(t.base, t.x);
  });
}

// explain(X) of whatif-spec.md §7.7 from its two replays.
Counterfactual Explain(const Selection& x, const Task& rem, const Task& add,
                       double t_ori, double t_ideal) {
  Counterfactual c;
  c.selector = x.label;
  c.t_ori = t_ori;
  c.t_ideal = t_ideal;
  c.t_rem = Mean(rem.times.span);
  c.t_add = Mean(add.times.span);
  const double gap = t_ori - t_ideal;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.rem = gap != 0 ? (t_ori - c.t_rem) / gap : nan;
  c.add = gap != 0 ? (c.t_add - t_ideal) / gap : nan;
  return c;
}

// `t_ideal_opt` is the per-step ideal time (the same for every step),
// `mean_ideal_opt` its mean over the steps as the published tool computes it.
void AddGroup(const Task& task, std::string key, double t_ideal_opt,
              double mean_ideal_opt, Decomposition* d) {
  d->keys.push_back(std::move(key));
  d->slowdown.push_back(Mean(task.times.opt) / mean_ideal_opt);
  std::vector<double> per_step(task.times.opt.size());
  for (size_t s = 0; s < per_step.size(); ++s) {
    per_step[s] = task.times.opt[s] / t_ideal_opt;
  }
  d->per_step.push_back(std::move(per_step));
}

// Eq. 2 and Eq. 4: un-fix one op group / DP rank / stage in the ideal replay.
void Decompose(const PreparedTrace& t, std::vector<ScenarioRunner>* runners,
               std::span<const double> traced, std::span<const double> ideal,
               double t_ideal_opt, double mean_ideal_opt, WhatIfResult* r) {
  std::vector<Task> tasks;
  std::vector<std::pair<Decomposition*, std::string>> keys;
  for (int g = 0; g < trace::kNumOpGroups; ++g) {
    const auto group = static_cast<trace::OpGroup>(g);
    SelectionTerm term = AllOps(t);
    bool any = false;
    for (NodeId v = 0; v < t.num_nodes(); ++v) {
      term.nodes[v] = trace::GroupOf(t.model.keys[v].type) == group;
      any |= term.nodes[v] != 0;
    }
    if (!any) continue;
    tasks.push_back({Base::kIdeal, Selection{"", {std::move(term)}}, {}});
    keys.emplace_back(&r->by_optype, std::string(trace::OpGroupName(group)));
  }
  const bool ranks = t.layout == Layout::kRanks;
  for (int32_t d = 0; d < t.dp && !ranks; ++d) {
    SelectionTerm term = AllOps(t);
    for (size_t i = 0; i < term.instances.size(); ++i) {
      term.instances[i] =
          i % static_cast<size_t>(t.dp) == static_cast<size_t>(d);
    }
    tasks.push_back({Base::kIdeal, Selection{"", {std::move(term)}}, {}});
    keys.emplace_back(&r->by_dp_rank, std::to_string(d));
  }
  // Profiler traces: replicas and stages are sets of ranks.
  for (int32_t d = 0; d < t.topology.dp && ranks; ++d) {
    tasks.push_back({Base::kIdeal, SelectPlaces(t, -1, d), {}});
    keys.emplace_back(&r->by_dp_rank, std::to_string(d));
  }
  for (int32_t s = 0; s < t.topology.pp && ranks && t.topology.pp > 1; ++s) {
    tasks.push_back({Base::kIdeal, SelectPlaces(t, s, -1), {}});
    keys.emplace_back(&r->by_pipeline_stage, std::to_string(s));
  }
  for (int32_t s = 0; s < t.pp; ++s) {
    tasks.push_back({Base::kIdeal, SelectStage(t, s), {}});
    const int32_t key =
        t.layout == Layout::kRanks ? t.worker_rank[static_cast<size_t>(s)] : s;
    keys.emplace_back(&r->by_stage, std::to_string(key));
  }
  RunTasks(&tasks, runners, traced, ideal);
  for (size_t k = 0; k < tasks.size(); ++k) {
    AddGroup(tasks[k], std::move(keys[k].second), t_ideal_opt, mean_ideal_opt,
             keys[k].first);
  }
}

// Every worker's exact S_w = T_opt with only it un-fixed / ideal T_opt
// (for Layout::kMegatron, where min(S_dp, S_pp) only approximates it).
void SetUnfixSlowdowns(const PreparedTrace& t, const WorkerUnfix& unfix,
                       double ideal_opt, WhatIfResult* r) {
  const double ideal = Mean(std::vector<double>(t.steps.size(), ideal_opt));
  std::vector<size_t> index_of(static_cast<size_t>(t.dp) * t.pp);
  for (size_t k = 0; k < t.workers.size(); ++k) {
    index_of[static_cast<size_t>(t.workers[k].dp) * t.pp +
             static_cast<size_t>(t.workers[k].pp)] = k;
  }
  for (WorkerScore& w : r->workers) {
    const size_t k =
        index_of[static_cast<size_t>(w.dp) * t.pp + static_cast<size_t>(w.pp)];
    w.unfix_slowdown = unfix.mean_opt_s[k] / ideal;
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

namespace {

// Step 1: the --fix / --unfix selections, parsed first so that a bad one
// fails before any replay.
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

// Step 2 (§6.1): T, the traced durations replayed without launch delays;
// the replayed durations D_nd of plain ops become the counterfactuals'
// traced costs. Then the self-test: with the measured launch delays the
// replay gives the trace back (its largest error goes into `r`).
struct TracedReplay {
  replay::StepTimes times;
  BigVector<double> cost_nd;
};

TracedReplay ReplayTraced(const PreparedTrace& t, ScenarioRunner* main,
                          WhatIfResult* r) {
  const size_t n = t.num_nodes(), inst = t.num_instances();
  main->SetCosts(t.cost, {});
  // Lanes are instances here: window lane lo + l is instance lo + l.
  TracedReplay out{{}, BigVector<double>(t.cost)};
  out.times = main->RunTraced({}, [&](const replay::WindowTimes& w) {
    for (NodeId v = 0; v < n; ++v) {
      if (t.model.graph.is_comm(v)) continue;
      const double* s = w.start + v * w.stride;
      const double* e = w.end + v * w.stride;
      double* o = out.cost_nd.data() + v * inst + w.lo;
      for (size_t l = 0; l < w.lanes; ++l) o[l] = e[l] - s[l];
    }
  });
  main->RunTraced(t.launch_delay, [&](const replay::WindowTimes& w) {
    for (NodeId v = 0; v < n; ++v) {
      const double* s = w.start + v * w.stride;
      const float* traced = t.start.data() + v * inst + w.lo;
      for (size_t l = 0; l < w.lanes; ++l) {
        r->self_test_max_error_s =
            std::max(r->self_test_max_error_s,
                     std::abs(s[l] - static_cast<double>(traced[l])));
      }
    }
  });
  return out;
}

// Step 3 (§6.2): T_ideal, every op at its pooled ideal value, replayed
// once (one lane: the ideal step is the same for every step).
struct IdealReplay {
  std::vector<double> node_cost;  // the pooled ideal input per node
  std::vector<double> cost;       // plain ops: replayed D_id
  double span = 0, opt = 0;
};

Result<IdealReplay> ReplayIdeal(const PreparedTrace& t,
                                const BigVector<double>& cost_nd,
                                IdealPool pool, ScenarioRunner* main) {
  IdealReplay out;
  out.node_cost = IdealCosts(t, cost_nd, pool);
  main->SetCosts(t.cost, out.node_cost);
  const replay::StepTimes id = main->RunIdealLane();
  out.cost = out.node_cost;
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    if (!t.model.graph.is_comm(v)) {
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
void Slowdowns(const PreparedTrace& t, const replay::StepTimes& nd,
               const IdealReplay& ideal, IdealPool pool, WhatIfResult* r) {
  r->step_t_replayed = nd.span;
  r->step_t_ideal.assign(t.steps.size(), ideal.span);
  // The mean of the per-step ideal series (all equal), summed as the
  // published tool sums it: not always bit-equal to the value itself.
  const double mean_ideal_opt =
      Mean(std::vector<double>(t.steps.size(), ideal.opt));
  r->slowdown = Mean(nd.span) / mean_ideal_opt;
  r->waste = 1.0 - 1.0 / r->slowdown;
  r->launch_slowdown =
      static_cast<double>(PairwiseMeanF32(t.step_t_base)) / Mean(nd.opt);
  for (size_t s = 0; s < t.steps.size(); ++s) {
    r->slowdown_per_step.push_back(nd.span[s] / ideal.opt);
    r->launch_slowdown_per_step.push_back(
        static_cast<double>(t.step_t_base[s]) / nd.opt[s]);
  }
  for (NodeId v = 0; v < t.num_nodes() && pool == IdealPool::kOpType; ++v) {
    const std::string name(trace::OpTypeName(t.model.keys[v].type));
    if (std::none_of(r->ideal.begin(), r->ideal.end(),
                     [&](const IdealValue& x) { return x.op_type == name; })) {
      r->ideal.push_back(IdealValue{name, ideal.node_cost[v]});
    }
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

struct Scenario {
  Selection selection;
  Role role;
};

// Step 5 (§7.7): fix only / un-fix only each scenario, each against the
// traced and the ideal base, all replays spread over the runners; then
// each explained into its place of the result.
void Counterfactuals(const PreparedTrace& t, std::vector<Scenario> scenarios,
                     const std::vector<Worker>& worst,
                     std::vector<ScenarioRunner>* runners,
                     const BigVector<double>& cost_nd,
                     const IdealReplay& ideal, double t_ori, WhatIfResult* r) {
  std::vector<Task> tasks;
  for (const Scenario& x : scenarios) {
    tasks.push_back({Base::kTraced, x.selection, {}});
    tasks.push_back({Base::kIdeal, x.selection, {}});
  }
  RunTasks(&tasks, runners, cost_nd, ideal.cost);
  const double mean_ideal_span = Mean(r->step_t_ideal);
  for (size_t k = 0; k < scenarios.size(); ++k) {
    Counterfactual c = Explain(scenarios[k].selection, tasks[2 * k],
                               tasks[2 * k + 1], t_ori, mean_ideal_span);
    switch (scenarios[k].role) {
      case Role::kWorstWorkers:
        for (const Worker& w : worst) c.ranks.push_back(w.rank);
        r->fix_worst_workers = std::move(c);
        break;
      case Role::kLastStage:
        for (const trace::RankPlace& w : t.topology.places) {
          if (w.pp == t.topology.pp - 1) c.ranks.push_back(w.rank);
        }
        r->fix_last_stage = std::move(c);
        break;
      case Role::kFix:
      case Role::kUnfix:
        c.unfix = scenarios[k].role == Role::kUnfix;
        r->selected.push_back(std::move(c));
        break;
    }
  }
}

}  // namespace

Result<WhatIfResult> Analyze(const PreparedTrace& t,
                             const WhatIfOptions& options) {
  WhatIfResult r;
  r.layout = t.layout;
  r.dp = t.dp, r.pp = t.pp, r.vpp = t.vpp;
  r.topology = t.topology;
  r.num_ops = t.num_nodes() * t.num_instances();
  r.steps = t.steps;
  r.step_t_observed.assign(t.step_t_base.begin(), t.step_t_base.end());
  ASSIGN_OR_RETURN(std::vector<Selection> selected,
                   ParseSelections(t, options));
  // One runner (replay workspace) per thread, reused by every scenario.
  std::vector<ScenarioRunner> runners;
  const size_t threads = options.threads ? options.threads : HardwareThreads();
  runners.reserve(threads);
  for (size_t k = 0; k < threads; ++k) runners.emplace_back(t);

  const TracedReplay traced = ReplayTraced(t, &runners.front(), &r);
  ASSIGN_OR_RETURN(const IdealReplay ideal,
                   ReplayIdeal(t, traced.cost_nd, options.pool,
                               &runners.front()));
  r.ideal_node_cost = ideal.node_cost;
  Slowdowns(t, traced.times, ideal, options.pool, &r);
  // Decompositions restore traced durations; counterfactuals use D_nd.
  Decompose(t, &runners, t.cost, ideal.cost, ideal.opt,
            Mean(std::vector<double>(t.steps.size(), ideal.opt)), &r);
  ScoreWorkers(t, &r);
  if (t.layout == Layout::kMegatron) {
    ASSIGN_OR_RETURN(const WorkerUnfix unfix,
                     UnfixEachWorker(t, t.cost, ideal.cost,
                                     {.threads = threads}));
    SetUnfixSlowdowns(t, unfix, ideal.opt, &r);
  }

  const std::vector<Worker> worst =
      WorstWorkers(t, r, options.worst_worker_percent);
  std::vector<Scenario> scenarios;
  scenarios.push_back({SelectWorkers(t, worst), Role::kWorstWorkers});
  // "The last stage" means nothing without a pipeline layout.
  const bool ranks = t.layout == Layout::kRanks;
  if (!ranks || t.topology.pp > 1) {
    scenarios.push_back({ranks ? SelectPlaces(t, t.topology.pp - 1, -1)
                               : SelectStage(t, t.pp - 1),
                         Role::kLastStage});
  }
  for (size_t k = 0; k < selected.size(); ++k) {
    scenarios.push_back({std::move(selected[k]),
                         k < options.fix.size() ? Role::kFix : Role::kUnfix});
  }
  Counterfactuals(t, std::move(scenarios), worst, &runners, traced.cost_nd,
                  ideal, Mean(traced.times.span), &r);
  for (const ScenarioRunner& runner : runners) {
    r.replayed_ops += runner.replayed_ops();
  }
  return r;
}

}  // namespace strag::whatif
