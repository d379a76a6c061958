// SPDX-License-Identifier: Apache-2.0
#include "report/render/terminal_summary.h"

#include "report/render/oncall_text.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <numeric>
#include <string_view>
#include <vector>

#include "base/f32.h"

#include "base/str_format.h"
#include "report/render/kernel_detail_text.h"
#include "report/render/plan_text.h"
#include "report/render/text_units.h"

namespace strag::report {
namespace {

using whatif::Counterfactual;
using whatif::Decomposition;
using whatif::WhatIfResult;


// Indices of `values` sorted descending (ties: first index first).
std::vector<size_t> Descending(const std::vector<double>& values) {
  std::vector<size_t> idx(values.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return values[a] > values[b]; });
  return idx;
}

void Ranking(std::string* out, const char* title, const std::string& prefix,
             const Decomposition& d, int top) {
  *out += StrFormat("  %s (S if only this one were left unfixed)\n", title);
  const std::vector<size_t> order = Descending(d.slowdown);
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(top); ++k) {
    const size_t g = order[k];
    const std::string label = prefix + d.keys[g];
    *out += StrFormat("    %-30s %6.3f   waste %5.1f%%\n", label.c_str(),
                   d.slowdown[g], 100.0 * (1.0 - 1.0 / d.slowdown[g]));
  }
}

// The first ranks of a list of `total` (the list may hold only the first).
std::string RankList(const std::vector<int32_t>& ranks, int64_t total) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < 8; ++i) {
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  if (total > 8) {
    s += StrFormat(", ... (%lld ranks)", static_cast<long long>(total));
  }
  return s;
}

std::string RankList(const std::vector<int32_t>& ranks) {
  return RankList(ranks, static_cast<int64_t>(ranks.size()));
}

void Explain(std::string* out, const char* metric, const std::string& what,
             const Counterfactual& c) {
  *out += StrFormat(
      "  %-4s %7.3f   fix only %s: step %s -> %s (ideal %s); "
      "un-fix only it: %.3f\n",
      metric, c.rem, what.c_str(), Duration(c.t_ori).c_str(),
      Duration(c.t_rem).c_str(), Duration(c.t_ideal).c_str(), c.add);
}

// `text` in bold `colour` (an ANSI code such as "31" for red) when asked.
std::string Paint(const std::string& text, const char* colour, bool on) {
  return on ? std::string("\033[1;") + colour + "m" + text + "\033[0m" : text;
}

// The on-call block: what is lost, who everyone waits for, why.
void OnCall(std::string* out, const diagnose::Diagnosis& d,
            const econ::StepCost& cost, const mitigate::Plan* plan, bool color,
            bool ranks, const std::vector<KernelDetail>& kernel_detail,
            const char* device) {
  *out += OnCallLead(d, cost.utilization, cost.gpus > 0, "  ", color);
  *out += StrFormat(
      "  excess step time %+.1f ms (%.0f%% blocking, %.0f%% launch "
      "delay); persistence: P90 of per-step S/S %.3f (%s), %s "
      "slowest in %.0f%% of steps\n",
      d.excess_step_time_ms, 100 * d.blocking_share,
      100 * (1 - d.blocking_share), d.persistence_p90,
      diagnose::PersistenceWord(d), ranks ? "the rank" : "its DP replica",
      100 * d.worst_worker_share);
  *out +=
      "  probable cause: " +
      Paint(std::string(diagnose::CauseName(d.probable_cause)), "33", color) +
      StrFormat("   (lost time: %.0f%% compute, %.0f%% communication)\n",
             100 * d.compute_share, 100 * d.communication_share);
  if (!d.worst_microbatch.empty()) {
    *out += "  worst microbatch: " + d.worst_microbatch + "\n";
  }
  if (!d.worst_collective.empty()) {
    *out += "  worst collective: " + d.worst_collective + "\n";
  }
  for (size_t k = 0; k < d.findings.size() && k < 4; ++k) {
    const diagnose::Finding& f = d.findings[k];
    *out += StrFormat("    %zu. %-26s confidence %.2f: %s\n", k + 1,
                   std::string(diagnose::CauseName(f.cause)).c_str(),
                   f.confidence, f.evidence.c_str());
  }
  *out += KernelDetailText(kernel_detail, "  ");
  const std::string next = plan ? NextStep(*plan, device) : "";
  *out += next.empty()
              ? "  next: `strag plan` (or --plan) prices every fix of the "
                "playbook on this job: balance the work, backups, drop or "
                "async, replace a node\n\n"
              : "  next: " + next + " (plan below)\n\n";
}

// Where the numbers come from: files, what was skipped, clock alignment,
// and the first warnings.
void Input(std::string* out, const InputNotes& in) {
  *out += StrFormat("  input: %lld %s trace file(s), %lld events",
                    static_cast<long long>(in.files), in.format.c_str(),
                    static_cast<long long>(in.events));
  if (!in.missing_ranks.empty()) {
    *out += "; no trace for rank(s) " +
            RankList(in.missing_ranks, in.missing_rank_count);
  }
  *out += "\n";
  if (!in.layout.empty()) *out += "  layout: " + in.layout + "\n";
  const ClockNotes& c = in.clock;
  if (!c.offset_ns.empty() && c.kept_raw) {
    *out += StrFormat(
        "  clocks: kept as written (absolute, and each of %lld collectives "
        "ends after its last member starts); end spread max %.1f us "
        "(p99 %.1f us)\n",
        static_cast<long long>(c.collectives), c.residual_max_us,
        c.residual_p99_us);
  } else if (!c.offset_ns.empty()) {
    *out += StrFormat(
        "  clocks: aligned on %lld collectives, offsets up to %.3f ms, "
        "residual max %.1f us (p99 %.1f us)\n",
        static_cast<long long>(c.collectives),
        1e-6 * static_cast<double>(c.max_abs_offset_ns), c.residual_max_us,
        c.residual_p99_us);
  }
  int64_t skipped = 0;
  for (const auto& [why, n] : in.skipped) skipped += n;
  if (skipped > 0) {
    *out += StrFormat("  skipped: %lld events (", static_cast<long long>(skipped));
    for (size_t k = 0; k < in.skipped.size() && k < 4; ++k) {
      *out += StrFormat("%s%s %lld", k ? ", " : "",
                      Printable(in.skipped[k].first).c_str(),
                        static_cast<long long>(in.skipped[k].second));
    }
    *out += in.skipped.size() > 4 ? ", ...; see --json)\n" : ")\n";
  }
  constexpr size_t kShown = 5;
  for (size_t k = 0; k < in.warnings.size() && k < kShown; ++k) {
    *out += "  warning: " + Printable(in.warnings[k]) + "\n";
  }
  if (in.warnings.size() > kShown) {
    *out += StrFormat("  ... and %zu more warnings (see --json)\n",
                      in.warnings.size() - kShown);
  }
}

}  // namespace

std::string RenderTerminalSummary(const Report& report,
                                  const SummaryOptions& options) {
  const WhatIfResult& r = report.result;
  const trace::JobMeta& meta = report.meta;
  const econ::StepCost& cost = report.cost;
  std::string out;
  const bool ranks = r.layout == whatif::Layout::kRanks;
  out += StrFormat("strag analyze: %s\n", Printable(report.source).c_str());
  if (ranks) {
    out += StrFormat(
        "  job: %zu traced ranks of %lld (layout not in the traces), %zu "
        "steps, %zu ops\n",
        r.workers.size(), static_cast<long long>(whatif::WorldSize(r, meta)),
        r.steps.size(), r.num_ops);
  } else {
    out += StrFormat(
        "  job: DP %d x PP %d x TP %d x CP %d (VPP %d), %zu traced "
        "workers, %zu steps, %zu ops\n",
        r.dp, r.pp, meta.tp, meta.cp, r.vpp, r.workers.size(), r.steps.size(),
        r.num_ops);
  }
  if (report.notes) Input(&out, *report.notes);
  out += "\n";
  OnCall(&out, report.diagnosis, cost,
         report.plan ? &*report.plan : nullptr, options.color, ranks,
         report.kernel_detail, DeviceWord(report));
  const double t = PairwiseMean(r.step_t_replayed);
  const double obs = PairwiseMean(r.step_t_observed);
  const double ideal = r.step_t_ideal.empty() ? 0.0 : r.step_t_ideal[0];
  out += StrFormat(
      "  slowdown S       %7.4f   mean step %s replayed (T) vs %s "
      "without stragglers (T_ideal)\n",
      r.slowdown, Duration(t).c_str(), Duration(ideal).c_str());
  const char* device = DeviceWord(report);
  out += StrFormat(
      "  waste            %6.1f%%   of the job's %s time is lost "
      "to stragglers (1 - 1/S)\n",
      100.0 * r.waste, device);
  if (r.slowdown < 1.0 || cost.utilization > 1.0) {
    out +=
        "  (below 1 within the ideal's noise: nothing measurable is lost; "
        "the negative waste and cost below are that noise, not a gain)\n";
  }
  if (cost.gpus > 0) {
    const econ::StepCost& c = cost;
    // A CPU job's dollars only with a price given (its default is 0).
    const bool cpu = std::string_view(device) == "CPU";
    const bool priced = !cpu || c.usd_per_gpu_hour > 0;
    out += StrFormat(
        "  utilization      %6.1f%%   of the allocated %s time does "
        "useful work (T_ideal / observed step)\n",
        100.0 * c.utilization, device);
    out += StrFormat("  lost             %7.1f   %s-seconds per step on %lld %s",
                     c.lost_gpu_seconds_per_step, device,
                     static_cast<long long>(c.gpus), cpu ? "ranks" : "GPUs");
    out += priced ? StrFormat(": $%.0f per hour at $%.2f per %s-hour\n",
                              c.wasted_usd_per_hour, c.usd_per_gpu_hour, device)
                  : std::string(" (no price for CPU time: --usd-per-gpu-hour X)\n");
    if (c.run_days > 0) {
      out += StrFormat("  over %.4g day(s)  %.0f %s-hours", c.run_days,
                       c.wasted_gpu_hours, device) +
             (priced ? StrFormat(" and $%.0f", c.wasted_usd) : "") +
             StrFormat(" lost; the run ends %.2f days later than without "
                       "stragglers\n",
                       c.extra_days);
    }
    // The cost lines lose 1 - utilization = 1 - 1/(observed / ideal step):
    // `strag cost --slowdown` of that ratio, not of S (which leaves out the
    // launch delays), gives the same figures.
    if (c.utilization > 0 && c.utilization <= 1) {
      out += StrFormat(
          "  cost slowdown    %7.4f   observed / ideal step (S x launch "
          "slowdown): the cost lines lose 1 - 1/it, as strag cost "
          "--slowdown %.4f\n",
          1.0 / c.utilization, 1.0 / c.utilization);
    }
  }
  out += StrFormat(
      "  launch slowdown  %7.4f   observed %s vs T: untraced host "
      "time (launch delays)\n\n",
      r.launch_slowdown, Duration(obs).c_str());
  Ranking(&out, "by op type", "", r.by_optype, options.top);
  if (ranks) {
    Ranking(&out, "by rank", "rank ", r.by_stage, options.top);
    out += "  worst ranks\n";
  } else {
    Ranking(&out, "by stage", "stage ", r.by_stage, options.top);
    Ranking(&out, "by DP rank", "dp ", r.by_dp_rank, options.top);
    out += "  worst workers (min of their DP rank's and stage's S)\n";
  }
  for (size_t k = 0;
       k < r.workers.size() && k < static_cast<size_t>(options.top); ++k) {
    const whatif::WorkerScore& w = r.workers[k];
    const std::string label = whatif::WorkerLabel(r.layout, w.rank, w.dp, w.pp);
    out += StrFormat("    %-30s %6.3f\n", label.c_str(), w.score);
  }
  out += "\n";
  const std::string worst =
      (r.fix_worst_workers.ranks.size() == 1 ? "rank " : "ranks ") +
      RankList(r.fix_worst_workers.ranks);
  Explain(&out, "M_W", worst, r.fix_worst_workers);
  if (ranks) {
    out += "  M_S      n/a   the traces do not say which ranks form a stage\n";
  } else if (r.pp > 1) {
    Explain(&out, "M_S", "the last stage", r.fix_last_stage);
  } else {
    out += "  M_S      n/a   the job has no pipeline stages\n";
  }
  for (const Counterfactual& c : r.selected) {
    if (c.unfix) {
      out += StrFormat(
          "  %-4s %7.3f   un-fix only %s: step %s (ideal %s); fix "
          "only it: %.3f\n",
          "add", c.add, c.selector.c_str(), Duration(c.t_add).c_str(),
          Duration(c.t_ideal).c_str(), c.rem);
    } else {
      Explain(&out, "rem", c.selector, c);
    }
  }
  out += "\n  slowest steps (S of the step)\n";
  const std::vector<size_t> order = Descending(r.slowdown_per_step);
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(options.top);
       ++k) {
    const size_t s = order[k];
    out += StrFormat("    step %-10lld %6.3f   observed %s, replayed %s\n",
                  static_cast<long long>(r.steps[s]), r.slowdown_per_step[s],
                  Duration(r.step_t_observed[s]).c_str(),
                  Duration(r.step_t_replayed[s]).c_str());
  }
  if (report.plan) {
    out += "\n";
    AppendPlanSection(*report.plan, options.color, DeviceWord(report), &out);
  }
  return out;
}

}  // namespace strag::report
