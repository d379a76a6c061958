// SPDX-License-Identifier: Apache-2.0
#include "mitigate/planner.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "base/f32.h"
#include "base/parallel_for.h"
#include "mitigate/rewrite_replay.h"

namespace strag::mitigate {
namespace {

double Mean(const std::vector<double>& v) { return PairwiseMean(v); }

// Two standard errors of the mean per-step difference a - b: how much of a
// gain the steps' own spread could make up.
double PairedNoise(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = a.size();
  if (n < 2) return 0;
  std::vector<double> d(n);
  for (size_t k = 0; k < n; ++k) d[k] = a[k] - b[k];
  const double mean = Mean(d);
  double ss = 0;
  for (double x : d) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  return 2 * sd / std::sqrt(static_cast<double>(n));
}

struct Baseline {
  std::vector<double> observed;  // per step, with launch delays
  std::vector<double> replayed;  // per step, without
  double step_s = 0, replayed_s = 0, ideal_s = 0;
};

// Per step: the predicted step of a proposal: its blocking change (replays
// without launch delays) on top of the host time it leaves (the traced
// costs with its launch delays, else today's), plus what it adds per step.
std::vector<double> Predicted(const Rewrite& rw, const Baseline& base,
                              const std::vector<double>& replayed,
                              RewriteReplayer* replayer) {
  std::vector<double> out = rw.launch_delay.empty()
                                ? base.observed
                                : replayer->WithDelays(rw.launch_delay);
  for (size_t k = 0; k < out.size(); ++k) {
    out[k] += replayed[k] - base.replayed[k] + rw.added_step_s;
  }
  return out;
}

// A proposal replayed and priced.
PlanRow Price(const Policy& policy, Proposal p,
              const std::vector<double>& predicted,
              const std::vector<double>& replayed, const Baseline& base,
              const Economics& e, double band_floor) {
  PlanRow row;
  row.policy = std::string(policy.name());
  row.family = policy.family();
  row.action = std::move(p.action);
  row.params = std::move(p.params);
  row.evidence = std::move(p.evidence);
  row.bound = p.bound;
  row.bound_note = std::move(p.bound_note);
  row.effects = std::move(p.effects);
  row.step_s = Mean(predicted);
  row.slowdown_after = Mean(replayed) / base.ideal_s;
  row.gain_step_s = base.step_s - row.step_s;
  const double loss = base.step_s - base.ideal_s;
  row.recovered = loss > 0 ? row.gain_step_s / loss : 0;
  const double band =
      std::max(band_floor, PairedNoise(base.observed, predicted));
  row.within_noise = !(row.gain_step_s > band);
  // GPU-hours per hour of the job at today's pace: what the same progress
  // costs today minus what it costs with the fix (its extra GPUs held, its
  // dropped tokens made up by more steps).
  const auto gpus = static_cast<double>(e.gpus);
  const double with_fix = (gpus + static_cast<double>(row.effects.extra_gpus)) *
                          row.step_s /
                          (row.effects.token_fraction * base.step_s);
  const double rate = gpus - with_fix;  // GPU-h saved per hour
  const double one_off = gpus * row.effects.downtime_s / 3600.0;
  row.gpu_hours_per_day = 24 * rate;
  row.net_gpu_hours = rate * e.horizon_hours - one_off;
  row.net_usd = row.net_gpu_hours * e.usd_per_gpu_hour;
  row.break_even_hours = one_off > 0 && rate > 0 ? one_off / rate : 0;
  return row;
}

int SemanticsRank(const PlanRow& r) {
  return static_cast<int>(r.effects.semantics);
}

// Dropped work and stale updates change what the model learns: such fixes
// go below every fix that keeps the training and gains for real.
bool ChangesTraining(const PlanRow& r) {
  return r.effects.semantics == Semantics::kBatchNoise ||
         r.effects.semantics == Semantics::kStaleness;
}

// True when `b` should go before `a` although `a` gains a little more:
// they tie within the band, and `b` is the gentler fix.
bool Gentler(const PlanRow& a, const PlanRow& b) {
  auto key = [](const PlanRow& r) {
    return std::tuple(SemanticsRank(r), static_cast<int>(r.family),
                      r.effects.extra_gpus, r.effects.restart ? 1 : 0);
  };
  return key(b) < key(a);
}

}  // namespace

void RankRows(double tie_gpu_hours, std::vector<PlanRow>* rows) {
  std::stable_sort(rows->begin(), rows->end(),
                   [](const PlanRow& a, const PlanRow& b) {
                     if (a.within_noise != b.within_noise) {
                       return !a.within_noise;
                     }
                     if (ChangesTraining(a) != ChangesTraining(b)) {
                       return !ChangesTraining(a);
                     }
                     return a.net_gpu_hours > b.net_gpu_hours;
                   });
  // Ties: adjacent rows within the band, the gentler first. Each swap
  // removes an inversion of the gentleness order, so this ends.
  for (bool swapped = true; swapped;) {
    swapped = false;
    for (size_t k = 0; k + 1 < rows->size(); ++k) {
      PlanRow& a = (*rows)[k];
      PlanRow& b = (*rows)[k + 1];
      if (a.within_noise != b.within_noise ||
          ChangesTraining(a) != ChangesTraining(b)) {
        continue;
      }
      if (a.net_gpu_hours - b.net_gpu_hours <= tie_gpu_hours && Gentler(a, b)) {
        std::swap(a, b);
        swapped = true;
      }
    }
  }
}

namespace {

// What one policy gave: its best proposal, or why it has none.
struct Outcome {
  std::optional<PlanRow> row;
  std::string skipped;
};

}  // namespace

Result<Plan> MakePlan(const JobView& job, size_t threads) {
  const whatif::PreparedTrace& t = job.trace;
  if (t.steps.empty() || t.num_nodes() == 0) {
    return InvalidInput("the plan needs at least one replayed step");
  }
  const Cells cells(t, job.econ.gpus_per_node);
  const size_t workers =
      std::max<size_t>(1, threads ? threads : HardwareThreads());
  std::vector<std::unique_ptr<RewriteReplayer>> replayers;
  for (size_t k = 0; k < workers; ++k) {
    replayers.push_back(std::make_unique<RewriteReplayer>(t));
  }
  Plan plan;
  Baseline base;
  base.replayed = replayers[0]->Replayed(Rewrite{});
  base.observed = replayers[0]->WithDelays({});
  base.step_s = Mean(base.observed);
  base.replayed_s = Mean(base.replayed);
  base.ideal_s = replayers[0]->IdealStep(job.result.ideal_node_cost);
  if (!(base.ideal_s > 0)) {
    return InvalidInput("the ideal step time is not positive: nothing to plan");
  }
  plan.step_s = base.step_s;
  plan.replayed_s = base.replayed_s;
  plan.ideal_s = base.ideal_s;
  plan.slowdown = base.replayed_s / base.ideal_s;
  plan.band_s = kReplayErrorShare * base.step_s;
  plan.band_note =
      "a gain under 1.3% of the step (the replay's median error against real "
      "runs) or under two standard errors of its per-step spread is within "
      "noise";
  plan.gpus = job.econ.gpus;
  plan.usd_per_gpu_hour = job.econ.usd_per_gpu_hour;
  plan.horizon_hours = job.econ.horizon_hours;
  plan.checkpoint_interval_s = job.econ.checkpoint_interval_s;
  plan.restart_s = job.econ.restart_s;
  plan.token_cap = job.token_cap;

  // Two net gains closer than the band (in GPU-hours over the horizon) are
  // a tie.
  const double tie = static_cast<double>(job.econ.gpus) * plan.band_s /
                     base.step_s * job.econ.horizon_hours;
  const std::vector<std::unique_ptr<Policy>> policies = AllPolicies();
  std::vector<Outcome> outcomes(policies.size());
  ParallelFor(policies.size(), workers, [&](size_t k, size_t worker) {
    const Policy& policy = *policies[k];
    Outcome& out = outcomes[k];
    const Applicability a = policy.Check(job, cells);
    if (!a.applies) {
      out.skipped = a.reason;
      return;
    }
    std::string why;
    std::vector<Proposal> proposals = policy.Propose(job, cells, &why);
    std::vector<PlanRow> rows;
    for (Proposal& p : proposals) {
      RewriteReplayer* replayer = replayers[worker].get();
      const std::vector<double> replayed = replayer->Replayed(p.rewrite);
      const std::vector<double> predicted =
          Predicted(p.rewrite, base, replayed, replayer);
      p.rewrite = Rewrite{};  // the arrays are not needed any more
      rows.push_back(Price(policy, std::move(p), predicted, replayed, base,
                           job.econ, plan.band_s));
    }
    // Proposals come simplest first (one node before all slow nodes, one
    // backup before many): a later one wins only by more than the band.
    size_t best = 0;
    for (size_t j = 1; j < rows.size(); ++j) {
      if (rows[j].net_gpu_hours > rows[best].net_gpu_hours + tie) best = j;
    }
    for (size_t j = 0; j < rows.size(); ++j) {
      if (j == best) continue;
      rows[best].alternatives.push_back({rows[j].action, rows[j].params,
                                         rows[j].step_s, rows[j].net_gpu_hours,
                                         rows[j].within_noise});
    }
    if (!rows.empty()) out.row = std::move(rows[best]);
    if (!out.row) out.skipped = why.empty() ? "no proposal" : why;
  });
  for (size_t k = 0; k < policies.size(); ++k) {
    if (outcomes[k].row) {
      plan.rows.push_back(std::move(*outcomes[k].row));
    } else {
      plan.skipped.push_back({std::string(policies[k]->name()),
                              policies[k]->family(),
                              std::move(outcomes[k].skipped)});
    }
  }
  RankRows(tie, &plan.rows);
  for (const auto& r : replayers) plan.replayed_ops += r->replayed_ops();
  return plan;
}

}  // namespace strag::mitigate
