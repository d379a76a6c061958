// SPDX-License-Identifier: Apache-2.0
#include "diagnose/detectors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "base/median.h"

namespace strag::diagnose {
namespace {

using trace::OpType;

// Below this excess slowdown (1%), a worker's excess is noise: the median
// worker's is floored at it when judging an outlier.
constexpr double kNoiseFloor = 0.01;

double Clamp01(double x) {
  return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0;
}

std::string Format(const char* fmt, double a, double b = 0, double c = 0,
                   double d = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

// Compute time of every worker (t.workers order) in every step, s. A
// worker is (model stage w.pp, model DP rank w.dp) in both layouts.
std::vector<std::vector<double>> WorkerComputePerStep(
    const whatif::PreparedTrace& t) {
  const size_t inst = t.num_instances(), dp = static_cast<size_t>(t.dp);
  std::map<std::pair<int32_t, size_t>, size_t> index;  // (stage, dp) -> k
  for (size_t k = 0; k < t.workers.size(); ++k) {
    index[{t.workers[k].pp, static_cast<size_t>(t.workers[k].dp)}] = k;
  }
  std::vector<std::vector<double>> out(t.workers.size(),
                                       std::vector<double>(t.steps.size()));
  for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
    const graph::OpKey& k = t.model.keys[v];
    // Forward and backward of an ops CSV; compute segments of a profiler
    // trace.
    if (!trace::IsCompute(k.type) && k.type != OpType::kCompute) continue;
    for (size_t i = 0; i < inst; ++i) {
      const auto it = index.find({k.stage, i % dp});
      if (it != index.end()) out[it->second][i / dp] += t.cost[t.Slot(v, i)];
    }
  }
  return out;
}

double MeanOf(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// The topology's PP stage of every worker (t.workers order).
std::vector<int32_t> StageOfWorkers(const whatif::PreparedTrace& t) {
  std::vector<int32_t> stage;
  for (size_t k = 0; k < t.workers.size(); ++k) {
    stage.push_back(k < t.topology.places.size() ? t.topology.places[k].pp
                                                 : t.workers[k].pp);
  }
  return stage;
}

// The DP rank with the highest un-fix slowdown in each step.
std::vector<size_t> WorstDpPerStep(const whatif::WhatIfResult& r) {
  std::vector<size_t> worst(r.steps.size(), 0);
  const auto& per = r.by_dp_rank.per_step;
  for (size_t s = 0; s < r.steps.size(); ++s) {
    for (size_t d = 1; d < per.size(); ++d) {
      if (per[d][s] > per[worst[s]][s]) worst[s] = d;
    }
  }
  return worst;
}

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  if (x.size() < 3) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= n, my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

bool IsCommGroup(const std::string& g) {
  return g != "forward-compute" && g != "backward-compute" &&
         g != "optimizer" && g != "gc" && g != "compute";
}

// Global rank of the worker of instance `i` and stage `stage`.
int32_t RankOf(const whatif::PreparedTrace& t, size_t i, int32_t stage) {
  const size_t dp = static_cast<size_t>(t.dp);
  return t.worker_rank[(i % dp) * static_cast<size_t>(t.pp) +
                       static_cast<size_t>(stage)];
}

// The host gap at the start of each worker's step, s, [rank] -> per step:
// the larger of the smallest launch delay of its root ops (those without a
// dependency: a gap before the step's first op) and the launch delay of its
// first compute (a gap after the step's opening collective, before the
// first forward: the batch was not ready).
std::map<int32_t, std::vector<double>> StepStartGaps(
    const whatif::PreparedTrace& t) {
  const size_t inst = t.num_instances(), dp = static_cast<size_t>(t.dp);
  constexpr double kUnset = std::numeric_limits<double>::max();
  std::map<int32_t, std::vector<double>> root, first_start, first_delay;
  for (const whatif::Worker& w : t.workers) {
    root[w.rank].assign(t.steps.size(), kUnset);
    first_start[w.rank].assign(t.steps.size(), kUnset);
    first_delay[w.rank].assign(t.steps.size(), 0.0);
  }
  for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
    const graph::OpKey& k = t.model.keys[v];
    const bool roots = t.model.graph.num_deps(v) == 0;
    const bool compute = trace::IsCompute(k.type) || k.type == OpType::kCompute;
    if (!roots && !compute) continue;
    for (size_t i = 0; i < inst; ++i) {
      const int32_t rank = RankOf(t, i, k.stage);
      const size_t step = i / dp;
      const double delay = t.launch_delay[t.Slot(v, i)];
      if (roots) root[rank][step] = std::min(root[rank][step], delay);
      const double start = t.start[t.Slot(v, i)];
      if (compute && start < first_start[rank][step]) {
        first_start[rank][step] = start;
        first_delay[rank][step] = delay;
      }
    }
  }
  for (auto& [rank, g] : root) {
    for (size_t s = 0; s < g.size(); ++s) {
      if (g[s] == kUnset) g[s] = 0;
      g[s] = std::max(g[s], first_delay[rank][s]);
    }
  }
  return root;
}

// The launch delays of at least 5 ms, summed over the trace, s.
double HostDelay(const whatif::PreparedTrace& t) {
  double total = 0;
  for (float ld : t.launch_delay) {
    if (ld >= 0.005f) total += ld;
  }
  return total;
}

// Host time the trace names ([worker * steps + step], s) as [rank] -> per
// step.
std::map<int32_t, std::vector<double>> NamedHostTime(
    const whatif::PreparedTrace& t, const std::vector<float>& per_slot) {
  std::map<int32_t, std::vector<double>> out;
  const size_t steps = t.steps.size();
  for (size_t k = 0; k < t.workers.size(); ++k) {
    std::vector<double>& v = out[t.workers[k].rank];
    for (size_t s = 0; s < steps; ++s) {
      v.push_back(k * steps + s < per_slot.size() ? per_slot[k * steps + s] : 0);
    }
  }
  return out;
}

}  // namespace

double WorstWorkerShare(const whatif::WhatIfResult& r,
                        const whatif::WorkerScore& w) {
  const bool ranks = r.layout == whatif::Layout::kRanks;
  const auto& per_step = ranks ? r.by_stage.per_step : r.by_dp_rank.per_step;
  const auto mine = static_cast<size_t>(ranks ? w.pp : w.dp);
  if (per_step.empty() || r.steps.empty() || mine >= per_step.size()) return 0;
  size_t hits = 0;
  for (size_t s = 0; s < r.steps.size(); ++s) {
    size_t worst = 0;
    for (size_t k = 1; k < per_step.size(); ++k) {
      if (per_step[k][s] > per_step[worst][s]) worst = k;
    }
    hits += worst == mine;
  }
  return static_cast<double>(hits) / static_cast<double>(r.steps.size());
}

Finding DetectFaultyWorker(const whatif::WhatIfResult& r) {
  Finding f{Cause::kFaultyWorker, 0, r.fix_worst_workers.ranks, ""};
  const double m = r.fix_worst_workers.rem;
  f.confidence = m > 0.5 ? Clamp01(m) : Clamp01(m) * 0.5;
  if (r.workers.empty()) return f;
  // An outlier against the job's own noise: the worst worker's excess is
  // several times the median of the others', and it is the slowest in most
  // steps (a transient spike on one rank is not a faulty worker).
  // The others' median: with two workers, the other one. In a pipeline the
  // others are the worker's DP peers (its stage's replicas: the same
  // program); with none, a slow worker cannot be told from a heavy stage.
  const trace::RankPlace* top_place =
      r.topology.Find(r.workers.front().rank);
  const bool by_stage = r.topology.pp > 1 && top_place != nullptr;
  std::vector<double> others;
  for (size_t k = 1; k < r.workers.size(); ++k) {
    const trace::RankPlace* p = r.topology.Find(r.workers[k].rank);
    if (by_stage && (p == nullptr || p->pp != top_place->pp)) continue;
    others.push_back(r.workers[k].score - 1);
  }
  const double top = r.workers.front().score - 1;
  const double ratio = top / std::max(Median(&others), kNoiseFloor);
  if (others.empty()) f.confidence *= 0.5;
  const double share = WorstWorkerShare(r, r.workers.front());
  f.step_share = share;
  f.confidence *= Clamp01((ratio - 1.5) / 1.5) *
                  (r.steps.size() < 2 ? 1.0 : Clamp01(share / 0.5));
  f.evidence =
      Format(
          "fixing only the worst %.0f worker(s) recovers M_W = %.2f of "
          "the slowdown (step %.4g s -> %.4g s)",
          static_cast<double>(f.ranks.size()), m, r.fix_worst_workers.t_ori,
          r.fix_worst_workers.t_rem) +
      Format(
          "; its excess is %.1fx the median of the others', and it is "
          "the slowest in %.0f%% of the steps",
          ratio, 100 * share);
  return f;
}

Finding DetectStageImbalance(const whatif::PreparedTrace& t,
                             const whatif::WhatIfResult& r) {
  Finding f{Cause::kStageImbalance, 0, {}, ""};
  const int32_t pp = t.topology.pp;
  if (pp < 2) return f;
  const auto work = WorkerComputePerStep(t);
  const std::vector<int32_t> stage_of = StageOfWorkers(t);
  std::vector<std::vector<double>> columns(static_cast<size_t>(pp));
  for (size_t k = 0; k < work.size(); ++k) {
    columns[static_cast<size_t>(stage_of[k])].push_back(MeanOf(work[k]));
  }
  // Each stage's typical worker: its lower median (with two replicas the
  // faster: one slow replica is a faulty worker, not a heavy stage).
  std::vector<double> stage(static_cast<size_t>(pp));
  for (size_t s = 0; s < stage.size(); ++s) {
    std::vector<double>& c = columns[s];
    if (c.empty()) continue;
    const auto mid = static_cast<ptrdiff_t>((c.size() - 1) / 2);
    std::nth_element(c.begin(), c.begin() + mid, c.end());
    stage[s] = c[static_cast<size_t>(mid)];
  }
  double mean = 0;
  for (double x : stage) mean += x / static_cast<double>(stage.size());
  const size_t heavy = static_cast<size_t>(
      std::max_element(stage.begin(), stage.end()) - stage.begin());
  const double ratio = mean > 0 ? stage[heavy] / mean : 1.0;
  const double ms = r.fix_last_stage.rem;
  // A last stage that is not heavier may still explain the slowdown (M_S)
  // in the published traces; for profiler traces it must be the heavy one.
  double conf = heavy + 1 == stage.size() &&
                        (r.layout == whatif::Layout::kMegatron || ratio >= 1.05)
                    ? Clamp01(ms)
                    : 0.0;
  const whatif::Decomposition& by_stage =
      r.layout == whatif::Layout::kMegatron ? r.by_stage : r.by_pipeline_stage;
  const double share =
      heavy < by_stage.slowdown.size()
          ? (by_stage.slowdown[heavy] - 1) / std::max(r.slowdown - 1, 1e-9)
          : 0.0;
  if (ratio >= 1.05)
    conf = std::max(conf, Clamp01((ratio - 1) / 0.2) * Clamp01(share));
  f.confidence = conf;
  for (size_t k = 0; k < t.workers.size(); ++k) {
    if (stage_of[k] == static_cast<int32_t>(heavy)) {
      f.ranks.push_back(t.workers[k].rank);
    }
  }
  // Persistence: the steps in which the heavy stage's typical worker
  // computes the most of all stages'.
  size_t heaviest = 0;
  for (size_t s = 0; s < t.steps.size(); ++s) {
    std::vector<std::vector<double>> per(static_cast<size_t>(pp));
    for (size_t k = 0; k < work.size(); ++k) {
      per[static_cast<size_t>(stage_of[k])].push_back(work[k][s]);
    }
    std::vector<double> typical;
    for (std::vector<double>& c : per) {
      if (c.empty()) {
        typical.push_back(0);
        continue;
      }
      const auto mid = static_cast<ptrdiff_t>((c.size() - 1) / 2);
      std::nth_element(c.begin(), c.begin() + mid, c.end());
      typical.push_back(c[static_cast<size_t>(mid)]);
    }
    heaviest += static_cast<size_t>(std::max_element(typical.begin(),
                                                     typical.end()) -
                                    typical.begin()) == heavy;
  }
  f.step_share = t.steps.empty() ? -1
                                 : static_cast<double>(heaviest) /
                                       static_cast<double>(t.steps.size());
  f.evidence = Format(
      "stage %.0f computes %.0f%% more than the average stage "
      "(typical worker); fixing only the last stage recovers "
      "M_S = %.2f of the slowdown",
      static_cast<double>(heavy), 100 * (ratio - 1), ms);
  return f;
}

// Without forward/backward op types (profiler traces): compute that varies
// from step to step far beyond noise, with the slowest rank of a stage
// moving between steps, is input-dependent work (sequence lengths).
Finding DetectMovingCompute(const whatif::PreparedTrace& t,
                            const whatif::WhatIfResult& r) {
  Finding f{Cause::kSequenceLengthImbalance, 0, {}, ""};
  const auto work = WorkerComputePerStep(t);
  const std::vector<int32_t> stage_of = StageOfWorkers(t);
  const size_t steps = t.steps.size();
  if (steps < 3 || work.size() < 2) return f;
  double spread = 0;  // mean over steps of the largest excess over median
  std::map<size_t, size_t> worst_count;
  for (size_t s = 0; s < steps; ++s) {
    std::map<int32_t, std::vector<double>> by_stage;
    for (size_t k = 0; k < work.size(); ++k) {
      by_stage[stage_of[k]].push_back(work[k][s]);
    }
    std::map<int32_t, double> median;
    for (auto& [stage, v] : by_stage) median[stage] = Median(&v);
    double top = 0;
    size_t worst = 0;
    for (size_t k = 0; k < work.size(); ++k) {
      const double m = median[stage_of[k]];
      const double excess = m > 0 ? work[k][s] / m - 1 : 0;
      if (excess > top) top = excess, worst = k;
    }
    spread += top / static_cast<double>(steps);
    ++worst_count[worst];
  }
  size_t top = 0, top_worker = 0;
  for (auto [k, c] : worst_count) {
    if (c > top) top = c, top_worker = k;
  }
  const double moves =
      1.0 - static_cast<double>(top) / static_cast<double>(steps);
  // Without token counts the evidence is indirect: at most 0.7.
  f.confidence = 0.7 * Clamp01((spread - 0.10) / 0.20) * Clamp01(moves / 0.5) *
                 Clamp01((r.slowdown - 1) / 0.05);
  f.ranks.push_back(t.workers[top_worker].rank);
  f.evidence = Format(
      "the slowest rank of a stage computes %.0f%% more than the stage's "
      "median rank on average per step, and a different rank is the slowest "
      "in %.0f%% of the steps: input-dependent work (sequence lengths; the "
      "traces carry no token counts, so this is inferred from timing alone)",
      100 * spread, 100 * moves);
  return f;
}

Finding DetectSequenceLengthImbalance(const whatif::PreparedTrace& t,
                                      const whatif::WhatIfResult& r) {
  if (t.layout == whatif::Layout::kRanks) return DetectMovingCompute(t, r);
  Finding f{Cause::kSequenceLengthImbalance, 0, {}, ""};
  const size_t inst = t.num_instances();
  double best_r = 0;
  int32_t best_stage = 0;
  for (int32_t s = 0; s < t.pp; ++s) {
    // (forward, backward) of microbatch k, centred per instance so that a
    // steadily slow worker does not correlate them.
    std::vector<double> x, y;
    for (size_t i = 0; i < inst; ++i) {
      std::vector<double> fx, by;
      for (int32_t k = 0;; ++k) {
        const int64_t fv = t.model.index.Find({OpType::kForwardCompute, k, s});
        const int64_t bv = t.model.index.Find({OpType::kBackwardCompute, k, s});
        if (fv < 0 || bv < 0) break;
        fx.push_back(t.cost[t.Slot(static_cast<graph::NodeId>(fv), i)]);
        by.push_back(t.cost[t.Slot(static_cast<graph::NodeId>(bv), i)]);
      }
      double mf = 0, mb = 0;
      for (size_t k = 0; k < fx.size(); ++k) mf += fx[k], mb += by[k];
      if (fx.empty()) continue;
      mf /= static_cast<double>(fx.size()),
          mb /= static_cast<double>(fx.size());
      for (size_t k = 0; k < fx.size(); ++k)
        x.push_back(fx[k] - mf), y.push_back(by[k] - mb);
    }
    const double rs = Pearson(x, y);
    if (rs > best_r) best_r = rs, best_stage = s;
  }
  // Does the slowest DP replica change from step to step?
  const std::vector<size_t> worst = WorstDpPerStep(r);
  std::map<size_t, size_t> count;
  for (size_t d : worst) ++count[d];
  size_t top = 0;
  for (auto [d, c] : count) top = std::max(top, c);
  const double moves =
      worst.empty()
          ? 0
          : 1.0 - static_cast<double>(top) / static_cast<double>(worst.size());
  f.confidence =
      Clamp01((best_r - 0.8) / 0.2) * (0.3 + 0.7 * Clamp01(moves / 0.5));
  f.evidence = Format(
      "forward and backward times of a microbatch correlate "
      "(Pearson r = %.3f on stage %.0f, within each worker's "
      "step) and the slowest DP replica changes in %.0f%% of "
      "the steps",
      best_r, static_cast<double>(best_stage), 100 * moves);
  return f;
}

Finding DetectHostPause(const whatif::PreparedTrace& t,
                        const whatif::WhatIfResult& r) {
  Finding f{Cause::kHostPause, 0, {}, ""};
  const size_t inst = t.num_instances(), dp = static_cast<size_t>(t.dp);
  // A pause: a launch delay of at least 5 ms before an op; they matter from
  // 5% of the step time on the rank with the most.
  constexpr float kPauseS = 0.005f;
  constexpr double kPauseShare = 0.05;
  size_t pauses = 0;
  double total = 0, longest = 0;
  std::map<int32_t, double> per_rank;  // total pause, s
  std::map<size_t, size_t> per_step;
  // rank -> step -> its pause time, s
  std::map<int32_t, std::map<size_t, double>> steps_of;
  // Host time the trace names as data loading is data loading's, not a
  // pause: it is taken off the launch delays of its rank and step.
  const bool ranks = t.layout == whatif::Layout::kRanks;
  std::vector<float> loading = ranks ? t.data_loading_s : std::vector<float>{};
  for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
    for (size_t i = 0; i < inst; ++i) {
      float ld = t.launch_delay[t.Slot(v, i)];
      const size_t slot = static_cast<size_t>(t.model.keys[v].stage) *
                              t.steps.size() + i / dp;
      if (slot < loading.size()) {
        const float used = std::min(ld, loading[slot]);
        loading[slot] -= used;
        ld -= used;
      }
      if (ld < kPauseS) continue;
      ++pauses;
      total += ld;
      longest = std::max(longest, static_cast<double>(ld));
      const int32_t rank = RankOf(t, i, t.model.keys[v].stage);
      per_rank[rank] += ld;
      steps_of[rank][i / dp] += ld;
      ++per_step[i / dp];
    }
  }
  std::vector<std::pair<double, int32_t>> order;  // longest total first
  for (auto [rank, total_s] : per_rank) order.emplace_back(-total_s, rank);
  std::sort(order.begin(), order.end());
  for (auto [neg, rank] : order) f.ranks.push_back(rank);
  const double blocking = r.slowdown - 1, launch = r.launch_slowdown - 1;
  // Pauses matter when they are a real share of the step on the rank that
  // has most of them, and more so when a few ranks have most of them.
  const double step_s = MeanOf(r.step_t_observed);
  const double top = order.empty() ? 0 : -order.front().first;
  const double share =
      step_s > 0 ? top / (step_s * static_cast<double>(t.steps.size())) : 0;
  const double concentration = total > 0 ? top / total : 0;
  double gc = 0;  // named GC time of the rank with the most pauses, s
  if (!f.ranks.empty()) {
    // The steps with a pause of the rank's own magnitude (a quarter of its
    // worst step at least; scheduling noise of a few ms is not one).
    const auto& mine = steps_of[f.ranks.front()];
    double worst = 0;
    for (const auto& [step, x] : mine) worst = std::max(worst, x);
    size_t hit = 0;
    for (const auto& [step, x] : mine) hit += x >= 0.25 * worst;
    f.step_share =
        static_cast<double>(hit) / static_cast<double>(t.steps.size());
    for (size_t k = 0; k < t.workers.size() && ranks; ++k) {
      if (t.workers[k].rank != f.ranks.front()) continue;
      for (size_t s = 0; s < t.steps.size(); ++s) {
        const size_t slot = k * t.steps.size() + s;
        if (slot < t.gc_s.size()) gc += t.gc_s[slot];
      }
    }
  }
  if (pauses > 0) {
    f.confidence = Clamp01(launch / std::max(launch + blocking, 1e-9) * 1.5) *
                   Clamp01(share / kPauseShare) *
                   (0.5 + 0.5 * Clamp01(concentration / 0.5));
  }
  double lined_up = 0;
  for (auto [step, n] : per_step)
    lined_up = std::max(lined_up, static_cast<double>(n));
  f.evidence =
      Format(
          "%.0f host pauses of at least 5 ms before an op (mean %.1f ms, "
          "longest %.1f ms) on %.0f workers",
          static_cast<double>(pauses),
          pauses ? 1e3 * total / static_cast<double>(pauses) : 0, 1e3 * longest,
          static_cast<double>(per_rank.size())) +
      Format(
          " in %.0f of the steps; at most %.0f in one step; "
          "launch slowdown %.3f",
          static_cast<double>(per_step.size()), lined_up, r.launch_slowdown) +
      Format(
          "; the rank with the most pauses %.1f%% of its step time and "
          "%.0f%% of all pause time",
          100 * share, 100 * concentration) +
      (gc > 0 ? Format("; its trace names %.1f ms of garbage collection per "
                       "step",
                       1e3 * gc / static_cast<double>(t.steps.size()))
              : std::string());
  return f;
}

Finding DetectDataLoading(const whatif::PreparedTrace& t,
                          const whatif::WhatIfResult& r) {
  Finding f{Cause::kDataLoading, 0, {}, ""};
  // The trace's own DataLoader time where it names it, else the host gap at
  // the start of each step.
  const bool named = !t.data_loading_s.empty();
  const auto times = named ? NamedHostTime(t, t.data_loading_s) : StepStartGaps(t);
  if (times.size() < 2 || t.steps.empty()) return f;
  // Per step, a rank is late when its time exceeds the median rank's by
  // 2 ms and 2% of the step.
  const size_t steps = t.steps.size();
  std::map<int32_t, std::pair<size_t, double>> late;  // steps, excess s
  for (size_t s = 0; s < steps; ++s) {
    std::vector<double> column;
    for (const auto& [rank, g] : times) column.push_back(g[s]);
    const double median = Median(&column);
    const double bar =
        std::max(0.002, 0.02 * static_cast<double>(t.step_t_base[s]));
    for (const auto& [rank, g] : times) {
      if (g[s] - median < bar) continue;
      auto& [n, excess] = late[rank];
      ++n;
      excess += g[s] - median;
    }
  }
  std::vector<std::pair<double, int32_t>> order;  // most excess first
  for (const auto& [rank, x] : late) order.emplace_back(-x.second, rank);
  if (order.empty()) return f;
  std::sort(order.begin(), order.end());
  for (const auto& [neg, rank] : order) f.ranks.push_back(rank);
  const auto& [n, excess] = late[f.ranks.front()];
  f.step_share = static_cast<double>(n) / static_cast<double>(steps);
  const double blocking = r.slowdown - 1, launch = r.launch_slowdown - 1;
  // Few late ranks among many is the signature; a job where most ranks are
  // late is a host-wide pause instead. A stall matters from 5% of the step
  // time, persistent or not.
  const double few = f.ranks.size() * 2 <= times.size() ? 1.0 : 0.5;
  const double per_step = excess / static_cast<double>(steps);
  const double share = per_step / std::max(MeanOf(r.step_t_observed), 1e-12);
  // Unnamed, late starts are data loading when they are most of the job's
  // host delay; where pauses hit anywhere in the steps, one that happens to
  // fall at a step's start is the same thing (GC), not an input pipeline.
  double late_total = 0;
  for (const auto& [rank, x] : late) late_total += x.second;
  const double at_start =
      named ? 1.0 : late_total / std::max(HostDelay(t), 1e-12);
  f.confidence = Clamp01(launch / std::max(launch + blocking, 1e-9) * 1.5) *
                 Clamp01(share / 0.05) * few * Clamp01(at_start / 0.5);
  f.evidence =
      Format(named ? "rank %.0f waits for its DataLoader in %.0f of %.0f steps "
                     "(%.1f ms more than the median rank on average)"
                   : "rank %.0f starts %.0f of %.0f steps late on the host (a "
                     "gap before its first op, %.1f ms more than the median "
                     "rank on average)",
             static_cast<double>(f.ranks.front()), static_cast<double>(n),
             static_cast<double>(steps), 1e3 * excess / static_cast<double>(n)) +
      Format("; launch slowdown %.3f", r.launch_slowdown);
  return f;
}

Finding DetectCommunication(const whatif::WhatIfResult& r) {
  Finding f{Cause::kCommunication, 0, {}, ""};
  double comm = 0, compute = 0;
  std::string worst;
  for (size_t g = 0; g < r.by_optype.keys.size(); ++g) {
    const double excess = r.by_optype.slowdown[g] - 1;
    if (IsCommGroup(r.by_optype.keys[g])) {
      if (excess > comm) comm = excess, worst = r.by_optype.keys[g];
    } else {
      compute = std::max(compute, excess);
    }
  }
  f.confidence = comm > 0.01 ? Clamp01(comm / (comm + compute)) : 0;
  f.evidence =
      "the slowest communication type is " +
      (worst.empty() ? std::string("none") : worst) +
      Format(" (S_t - 1 = %.3f) against %.3f for the slowest compute type",
             comm, compute);
  return f;
}

Finding DetectHealthy(const whatif::WhatIfResult& r) {
  Finding f{Cause::kNone, 0, {}, ""};
  if (r.slowdown < 1.05 && r.launch_slowdown < 1.05) {
    f.confidence = 1.0;
  }
  f.evidence = Format(
      "S = %.3f and launch slowdown %.3f: residual noise costs %.1f%% "
      "of the GPU time",
      r.slowdown, r.launch_slowdown,
      100 * (1 - 1 / (r.slowdown * r.launch_slowdown)));
  return f;
}

}  // namespace strag::diagnose
