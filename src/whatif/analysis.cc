// SPDX-License-Identifier: Apache-2.0
#include "whatif/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/f32.h"
#include "whatif/scenario_runner.h"
#include "whatif/selection.h"

namespace strag::whatif {
namespace {

using graph::NodeId;

double Median(std::vector<double>* v) {
  if (v->empty()) return 0.0;
  const size_t mid = v->size() / 2;
  std::nth_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(mid), v->end());
  const double hi = (*v)[mid];
  if (v->size() % 2 == 1) return hi;
  const double lo = *std::max_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(mid));
  return (lo + hi) / 2.0;
}

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
        out[v] = ids.emplace(std::pair{type, k.stage}, ids.size()).first->second;
        break;
      case IdealPool::kOp:
        out[v] = v;
        break;
    }
  }
  return out;
}

// whatif-spec.md §6.2: the ideal cost of every node. Compute types take the
// mean of the no-delay replayed durations, communication types the median
// (transfer times rounded to binary32 for comm ops).
std::vector<double> IdealCosts(const PreparedTrace& t,
                               const std::vector<double>& cost_nd,
                               IdealPool pool) {
  const size_t inst = t.num_instances();
  const std::vector<size_t> pool_of = PoolOfNodes(t, pool);
  const size_t num_pools = *std::max_element(pool_of.begin(), pool_of.end()) + 1;
  // Values per (pool, comm?) since comm ops of a pool use transfer times.
  std::vector<std::vector<double>> values(2 * num_pools);
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    auto& bucket = values[2 * pool_of[v] + (t.model.graph.is_comm(v) ? 1 : 0)];
    bucket.insert(bucket.end(), cost_nd.begin() + static_cast<ptrdiff_t>(v * inst),
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

Counterfactual Explain(ScenarioRunner* runner, const Selection& x,
                       double t_ori, double t_ideal) {
  Counterfactual c;
  c.selector = x.label;
  c.t_ori = t_ori;
  c.t_ideal = t_ideal;
  c.t_rem = Mean(runner->Run(Base::kTraced, x).span);
  c.t_add = Mean(runner->Run(Base::kIdeal, x).span);
  const double gap = t_ori - t_ideal;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.rem = gap != 0 ? (t_ori - c.t_rem) / gap : nan;
  c.add = gap != 0 ? (c.t_add - t_ideal) / gap : nan;
  return c;
}

void AddGroup(ScenarioRunner* runner, const Selection& x, std::string key,
              double t_ideal_opt, Decomposition* d) {
  const replay::StepTimes t = runner->Run(Base::kIdeal, x);
  d->keys.push_back(std::move(key));
  d->slowdown.push_back(Mean(t.opt) / t_ideal_opt);
  std::vector<double> per_step(t.opt.size());
  for (size_t s = 0; s < per_step.size(); ++s) per_step[s] = t.opt[s] / t_ideal_opt;
  d->per_step.push_back(std::move(per_step));
}

// Eq. 2 and Eq. 4: un-fix one op group / DP rank / stage in the ideal replay.
void Decompose(const PreparedTrace& t, ScenarioRunner* runner,
               double t_ideal_opt, WhatIfResult* r) {
  for (int g = 0; g < trace::kNumOpGroups; ++g) {
    const auto group = static_cast<trace::OpGroup>(g);
    SelectionTerm term = AllOps(t);
    bool any = false;
    for (NodeId v = 0; v < t.num_nodes(); ++v) {
      term.nodes[v] = trace::GroupOf(t.model.keys[v].type) == group;
      any |= term.nodes[v] != 0;
    }
    if (!any) continue;
    AddGroup(runner, Selection{"", {std::move(term)}},
             std::string(trace::OpGroupName(group)), t_ideal_opt, &r->by_optype);
  }
  for (int32_t d = 0; d < t.dp; ++d) {
    SelectionTerm term = AllOps(t);
    for (size_t i = 0; i < term.instances.size(); ++i) {
      term.instances[i] = i % static_cast<size_t>(t.dp) == static_cast<size_t>(d);
    }
    AddGroup(runner, Selection{"", {std::move(term)}}, std::to_string(d),
             t_ideal_opt, &r->by_dp_rank);
  }
  for (int32_t s = 0; s < t.pp; ++s) {
    AddGroup(runner, SelectStage(t, s), std::to_string(s), t_ideal_opt,
             &r->by_stage);
  }
}

void ScoreWorkers(const PreparedTrace& t, WhatIfResult* r) {
  for (const Worker& w : t.workers) {
    const double score = std::min(r->by_dp_rank.slowdown[static_cast<size_t>(w.dp)],
                                  r->by_stage.slowdown[static_cast<size_t>(w.pp)]);
    r->workers.push_back(WorkerScore{w.rank, w.dp, w.pp, score});
  }
  std::stable_sort(r->workers.begin(), r->workers.end(),
                   [](const WorkerScore& a, const WorkerScore& b) {
                     if (a.score != b.score) return a.score > b.score;
                     return a.rank < b.rank;
                   });
}

}  // namespace

Result<WhatIfResult> Analyze(const PreparedTrace& t,
                             const WhatIfOptions& options) {
  WhatIfResult r;
  r.dp = t.dp, r.pp = t.pp, r.vpp = t.vpp;
  r.num_ops = t.row.size();
  r.steps = t.steps;
  r.step_t_observed.assign(t.step_t_base.begin(), t.step_t_base.end());
  const size_t n = t.num_nodes(), inst = t.num_instances();

  // T: the traced durations replayed without launch delays (§6.1).
  ScenarioRunner traced(t, t.cost, {});
  const replay::StepTimes nd = traced.RunTraced({});
  std::vector<double> cost_nd(t.cost);  // plain ops: replayed durations D_nd
  for (NodeId v = 0; v < n; ++v) {
    if (t.model.graph.is_comm(v)) continue;
    for (size_t i = 0; i < inst; ++i) {
      const size_t slot = v * inst + i;
      cost_nd[slot] = traced.times().end[slot] - traced.times().start[slot];
    }
  }
  // Self-test: with the measured launch delays the replay gives the trace.
  traced.RunTraced(t.launch_delay);
  for (size_t slot = 0; slot < t.start.size(); ++slot) {
    r.self_test_max_error_s =
        std::max(r.self_test_max_error_s,
                 std::abs(traced.times().start[slot] - static_cast<double>(t.start[slot])));
  }

  // T_ideal: every op at its pooled ideal value (§6.2).
  const std::vector<double> ideal_in = IdealCosts(t, cost_nd, options.pool);
  ScenarioRunner ideal_runner(t, t.cost, ideal_in);
  const replay::StepTimes id = ideal_runner.RunIdealLane();
  std::vector<double> ideal_cost(ideal_in);  // plain ops: replayed D_id
  for (NodeId v = 0; v < n; ++v) {
    if (!t.model.graph.is_comm(v)) {
      ideal_cost[v] = ideal_runner.times().end[v] - ideal_runner.times().start[v];
    }
  }
  const double ideal_span = id.span[0], ideal_opt = id.opt[0];
  r.step_t_replayed = nd.span;
  r.step_t_ideal.assign(t.steps.size(), ideal_span);

  r.slowdown = Mean(nd.span) / ideal_opt;
  r.waste = 1.0 - 1.0 / r.slowdown;
  r.launch_slowdown =
      static_cast<double>(PairwiseMeanF32(t.step_t_base)) / Mean(nd.opt);
  for (size_t s = 0; s < t.steps.size(); ++s) {
    r.slowdown_per_step.push_back(nd.span[s] / ideal_opt);
    r.launch_slowdown_per_step.push_back(
        static_cast<double>(t.step_t_base[s]) / nd.opt[s]);
  }
  for (NodeId v = 0; v < n; ++v) {
    const std::string name(trace::OpTypeName(t.model.keys[v].type));
    if (options.pool != IdealPool::kOpType) break;
    if (std::none_of(r.ideal.begin(), r.ideal.end(),
                     [&](const IdealValue& x) { return x.op_type == name; })) {
      r.ideal.push_back(IdealValue{name, ideal_in[v]});
    }
  }

  // Decompositions restore traced durations; counterfactuals use D_nd.
  ScenarioRunner decompose(t, t.cost, ideal_cost);
  Decompose(t, &decompose, ideal_opt, &r);
  ScoreWorkers(t, &r);

  ScenarioRunner explain(t, cost_nd, ideal_cost);
  const double t_ori = Mean(nd.span);
  const size_t num_worst = std::max<size_t>(
      1, static_cast<size_t>(std::ceil(options.worst_worker_fraction *
                                           static_cast<double>(t.workers.size()) -
                                       1e-9)));
  std::vector<Worker> worst;
  for (size_t k = 0; k < num_worst && k < r.workers.size(); ++k) {
    worst.push_back(Worker{r.workers[k].rank, r.workers[k].dp, r.workers[k].pp});
  }
  r.fix_worst_workers =
      Explain(&explain, SelectWorkers(t, worst), t_ori, ideal_span);
  for (const Worker& w : worst) r.fix_worst_workers.ranks.push_back(w.rank);
  r.fix_last_stage =
      Explain(&explain, SelectStage(t, t.pp - 1), t_ori, ideal_span);
  for (const Worker& w : t.workers) {
    if (w.pp == t.pp - 1) r.fix_last_stage.ranks.push_back(w.rank);
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& text : pass == 0 ? options.fix : options.unfix) {
      ASSIGN_OR_RETURN(Selection x, ParseSelection(text, t));
      Counterfactual c = Explain(&explain, x, t_ori, ideal_span);
      c.unfix = pass == 1;
      r.selected.push_back(std::move(c));
    }
  }
  r.replayed_ops = traced.replayed_ops() + ideal_runner.replayed_ops() +
                   decompose.replayed_ops() + explain.replayed_ops();
  return r;
}

}  // namespace strag::whatif
