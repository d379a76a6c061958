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

// A worker's score: min(S_dp, S_pp) of its DP rank and stage (published);
// for profiler traces, the un-fix-only-this-rank slowdown itself.
void ScoreWorkers(const PreparedTrace& t, WhatIfResult* r) {
  for (const Worker& w : t.workers) {
    const double own = r->by_stage.slowdown[static_cast<size_t>(w.pp)];
    const double score =
        t.layout == Layout::kRanks
            ? own
            : std::min(r->by_dp_rank.slowdown[static_cast<size_t>(w.dp)], own);
    r->workers.push_back(WorkerScore{w.rank, w.dp, w.pp, score});
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

Result<WhatIfResult> Analyze(const PreparedTrace& t,
                             const WhatIfOptions& options) {
  WhatIfResult r;
  r.layout = t.layout;
  r.dp = t.dp, r.pp = t.pp, r.vpp = t.vpp;
  r.topology = t.topology;
  r.num_ops = t.num_nodes() * t.num_instances();
  r.steps = t.steps;
  r.step_t_observed.assign(t.step_t_base.begin(), t.step_t_base.end());
  const size_t n = t.num_nodes(), inst = t.num_instances();
  // Selections are parsed first so that a bad one fails fast.
  std::vector<Selection> selected;
  for (const auto* list : {&options.fix, &options.unfix}) {
    for (const std::string& text : *list) {
      ASSIGN_OR_RETURN(Selection x, ParseSelection(text, t));
      selected.push_back(std::move(x));
    }
  }
  // One runner (replay workspace) per thread, reused by every scenario.
  std::vector<ScenarioRunner> runners;
  const size_t threads = options.threads ? options.threads : HardwareThreads();
  runners.reserve(threads);
  for (size_t k = 0; k < threads; ++k) runners.emplace_back(t);
  ScenarioRunner& main = runners.front();

  // T: the traced durations replayed without launch delays (§6.1).
  main.SetCosts(t.cost, {});
  // Lanes are instances here: window lane lo + l is instance lo + l.
  BigVector<double> cost_nd(t.cost);  // plain ops: replayed durations D_nd
  const replay::StepTimes nd =
      main.RunTraced({}, [&](const replay::WindowTimes& w) {
        for (NodeId v = 0; v < n; ++v) {
          if (t.model.graph.is_comm(v)) continue;
          const double* s = w.start + v * w.stride;
          const double* e = w.end + v * w.stride;
          double* out = cost_nd.data() + v * inst + w.lo;
          for (size_t l = 0; l < w.lanes; ++l) out[l] = e[l] - s[l];
        }
      });
  // Self-test: with the measured launch delays the replay gives the trace.
  main.RunTraced(t.launch_delay, [&](const replay::WindowTimes& w) {
    for (NodeId v = 0; v < n; ++v) {
      const double* s = w.start + v * w.stride;
      const float* traced = t.start.data() + v * inst + w.lo;
      for (size_t l = 0; l < w.lanes; ++l) {
        r.self_test_max_error_s =
            std::max(r.self_test_max_error_s,
                     std::abs(s[l] - static_cast<double>(traced[l])));
      }
    }
  });

  // T_ideal: every op at its pooled ideal value (§6.2).
  const std::vector<double> ideal_in = IdealCosts(t, cost_nd, options.pool);
  r.ideal_node_cost = ideal_in;
  main.SetCosts(t.cost, ideal_in);
  const replay::StepTimes id = main.RunIdealLane();
  std::vector<double> ideal_cost(ideal_in);  // plain ops: replayed D_id
  for (NodeId v = 0; v < n; ++v) {
    if (!t.model.graph.is_comm(v)) {
      ideal_cost[v] = main.times().end[v] - main.times().start[v];
    }
  }
  const double ideal_span = id.span[0], ideal_opt = id.opt[0];
  if (!(ideal_opt > 0) || !std::isfinite(ideal_opt)) {
    return InvalidInput("the ideal step time is " + std::to_string(ideal_opt) +
                        " s: every op of the trace has zero duration");
  }
  r.step_t_replayed = nd.span;
  r.step_t_ideal.assign(t.steps.size(), ideal_span);
  // Means of the per-step ideal series (all equal), summed as the published
  // tool sums them: not always bit-equal to the value itself.
  const double mean_ideal_span = Mean(r.step_t_ideal);
  const double mean_ideal_opt =
      Mean(std::vector<double>(t.steps.size(), ideal_opt));

  r.slowdown = Mean(nd.span) / mean_ideal_opt;
  r.waste = 1.0 - 1.0 / r.slowdown;
  r.launch_slowdown =
      static_cast<double>(PairwiseMeanF32(t.step_t_base)) / Mean(nd.opt);
  for (size_t s = 0; s < t.steps.size(); ++s) {
    r.slowdown_per_step.push_back(nd.span[s] / ideal_opt);
    r.launch_slowdown_per_step.push_back(static_cast<double>(t.step_t_base[s]) /
                                         nd.opt[s]);
  }
  for (NodeId v = 0; v < n && options.pool == IdealPool::kOpType; ++v) {
    const std::string name(trace::OpTypeName(t.model.keys[v].type));
    if (std::none_of(r.ideal.begin(), r.ideal.end(),
                     [&](const IdealValue& x) { return x.op_type == name; })) {
      r.ideal.push_back(IdealValue{name, ideal_in[v]});
    }
  }

  // Decompositions restore traced durations; counterfactuals use D_nd.
  Decompose(t, &runners, t.cost, ideal_cost, ideal_opt, mean_ideal_opt, &r);
  ScoreWorkers(t, &r);

  const size_t percent =
      static_cast<size_t>(std::max(1, options.worst_worker_percent));
  const size_t num_worst = (percent * t.workers.size() + 99) / 100;  // ceil
  std::vector<Worker> worst;
  for (size_t k = 0; k < num_worst && k < r.workers.size(); ++k) {
    worst.push_back(
        Worker{r.workers[k].rank, r.workers[k].dp, r.workers[k].pp});
  }
  // "The last stage" means nothing without a pipeline layout.
  const bool ranks = t.layout == Layout::kRanks;
  const bool last_stage = !ranks || t.topology.pp > 1;
  selected.insert(selected.begin(), SelectWorkers(t, worst));
  if (last_stage) {
    selected.insert(selected.begin() + 1,
                    ranks ? SelectPlaces(t, t.topology.pp - 1, -1)
                          : SelectStage(t, t.pp - 1));
  }
  const size_t first_selected = last_stage ? 2 : 1;
  std::vector<Task> tasks;
  for (const Selection& x : selected) {
    tasks.push_back({Base::kTraced, x, {}});
    tasks.push_back({Base::kIdeal, x, {}});
  }
  RunTasks(&tasks, &runners, cost_nd, ideal_cost);
  const double t_ori = Mean(nd.span);
  for (size_t k = 0; k < selected.size(); ++k) {
    Counterfactual c = Explain(selected[k], tasks[2 * k], tasks[2 * k + 1],
                               t_ori, mean_ideal_span);
    if (k == 0) {
      for (const Worker& w : worst) c.ranks.push_back(w.rank);
      r.fix_worst_workers = std::move(c);
    } else if (k < first_selected) {
      for (const trace::RankPlace& w : t.topology.places) {
        if (w.pp == t.topology.pp - 1) c.ranks.push_back(w.rank);
      }
      r.fix_last_stage = std::move(c);
    } else {
      c.unfix = k - first_selected >= options.fix.size();
      r.selected.push_back(std::move(c));
    }
  }
  for (const ScenarioRunner& runner : runners) {
    r.replayed_ops += runner.replayed_ops();
  }
  return r;
}

}  // namespace strag::whatif
