// SPDX-License-Identifier: Apache-2.0
#include "report/render/plan_text.h"

#include <string_view>

#include <algorithm>
#include <cmath>

#include "base/str_format.h"
#include "report/render/text_units.h"

namespace strag::report {
namespace {

using mitigate::PlanRow;

std::string Hours(double h) {
  if (h < 1) return StrFormat("%.0f min", h * 60);
  if (h < 48) return StrFormat("%.1f h", h);
  return StrFormat("%.1f days", h / 24);
}

// "restart (40 min down), 64 extra GPUs, drops 1.0% of the tokens"
std::string Effects(const PlanRow& r) {
  const mitigate::SideEffects& e = r.effects;
  std::string out;
  auto add = [&](const std::string& s) {
    out += (out.empty() ? "" : ", ") + s;
  };
  if (e.restart) add("restart (" + Hours(e.downtime_s / 3600) + " down)");
  if (e.extra_gpus > 0) {
    add(StrFormat("%lld extra GPUs", static_cast<long long>(e.extra_gpus)));
  }
  if (e.semantics != mitigate::Semantics::kIdentical) {
    add("training semantics: " +
        std::string(mitigate::SemanticsName(e.semantics)));
  }
  if (e.token_fraction < 1) {
    add(StrFormat("trains on %.1f%% of the tokens", 100 * e.token_fraction));
  }
  if (!e.memory_change_per_stage.empty()) {
    const auto most = std::max_element(e.memory_change_per_stage.begin(),
                                       e.memory_change_per_stage.end());
    if (*most > 0.005) {
      add(StrFormat("stage %td stores %+.0f%% activations",
                    most - e.memory_change_per_stage.begin(), 100 * *most));
    }
  }
  return out.empty() ? "none" : out;
}

std::string Money(double usd) {
  return StrFormat("%s$%.0f", usd < 0 ? "-" : "", std::abs(usd));
}

}  // namespace

std::string PlanFleet(const mitigate::Plan& p, const char* device) {
  const bool cpu = std::string_view(device) == "CPU";
  if (cpu && !(p.usd_per_gpu_hour > 0)) {
    return StrFormat("%lld ranks (CPU time, no price)",
                     static_cast<long long>(p.gpus));
  }
  return StrFormat("%lld %s at $%.2f per %s-hour",
                   static_cast<long long>(p.gpus), cpu ? "ranks" : "GPUs",
                   p.usd_per_gpu_hour, device);
}

std::string NextStep(const mitigate::Plan& plan, const char* device) {
  if (!plan.withheld.empty() || plan.rows.empty()) return "";
  const PlanRow& top = plan.rows.front();
  if (top.within_noise) {
    return "no fix gains more than the replay's noise";
  }
  return StrFormat("%s (%s): recovers %.0f%% of the loss, %+.0f %s-h net",
                   top.policy.c_str(), top.action.c_str(), 100 * top.recovered,
                   top.net_gpu_hours, device);
}

void AppendPlanSection(const mitigate::Plan& p, bool color,
                       const char* device, std::string* out) {
  if (!p.withheld.empty()) {
    *out += "  plan withheld: " + p.withheld + "\n";
    return;
  }
  const double loss = p.step_s - p.ideal_s;
  *out += StrFormat(
      "  plan: each fix replayed on the job's own dependency graph; %s over "
      "%s\n",
      PlanFleet(p, device).c_str(), Hours(p.horizon_hours).c_str());
  *out += StrFormat(
      "  now: step %s (ideal %s, S %.3f): %s lost per step; a gain under %s "
      "is within noise\n\n",
      Duration(p.step_s).c_str(), Duration(p.ideal_s).c_str(), p.slowdown,
      Duration(loss).c_str(), Duration(p.band_s).c_str());
  const std::string net_hours = StrFormat("net %s-h", device);
  *out += StrFormat("    %-19s %10s %7s %9s %13s %10s %11s\n", "fix",
                    "step after", "S after", "recovers", net_hours.c_str(),
                    "net $", "break-even");
  if (p.rows.empty()) *out += "  no fix applies to this job\n";
  size_t rank = 0;
  bool noise_header = false;
  for (const PlanRow& r : p.rows) {
    if (r.within_noise && !noise_header) {
      *out += "  within noise (not ranked above a real gain)\n";
      noise_header = true;
    }
    const std::string name =
        r.within_noise ? "   " + r.policy
                       : StrFormat("%zu. %s", ++rank, r.policy.c_str());
    std::string line = StrFormat(
        "  %-21s %10s %7.3f %8.0f%% %+13.0f %10s %11s", name.c_str(),
        Duration(r.step_s).c_str(), r.slowdown_after, 100 * r.recovered,
        r.net_gpu_hours, Money(r.net_usd).c_str(),
        r.break_even_hours > 0 ? Hours(r.break_even_hours).c_str() : "-");
    if (color && rank == 1 && !r.within_noise) {
      line = "\033[1;32m" + line + "\033[0m";
    }
    *out += line + (r.bound ? "  (bound)\n" : "\n");
    *out += "       " + r.action + "\n";
    *out += "       why: " + r.evidence + "\n";
    *out += "       side effects: " + Effects(r) + "\n";
    if (!r.effects.caveat.empty())
      *out += "       note: " + r.effects.caveat + "\n";
    if (r.bound) *out += "       bound: " + r.bound_note + "\n";
    for (const mitigate::Alternative& a : r.alternatives) {
      *out += StrFormat("       instead %s: step %s, %+.0f %s-h net%s\n",
                        a.params.c_str(), Duration(a.step_s).c_str(),
                        a.net_gpu_hours, device,
                        a.within_noise ? " (noise)" : "");
    }
  }
  if (!p.skipped.empty()) *out += "  not applicable\n";
  for (const mitigate::SkippedPolicy& s : p.skipped) {
    *out += StrFormat("    %-19s %s\n", s.policy.c_str(), s.reason.c_str());
  }
}

std::string RenderPlanSummary(const Report& report, bool color) {
  const whatif::WhatIfResult& r = report.result;
  std::string out = "strag plan: " + report.source + "\n";
  const char* device = DeviceWord(report);
  out += StrFormat(
      "  job: %lld %s, %zu traced workers, %zu steps; S %.4f, utilization "
      "%.1f%%; probable cause: %s\n\n",
      static_cast<long long>(report.cost.gpus),
      std::string_view(device) == "CPU" ? "ranks" : "GPUs", r.workers.size(),
      r.steps.size(), r.slowdown, 100 * report.cost.utilization,
      std::string(diagnose::CauseName(report.diagnosis.probable_cause))
          .c_str());
  if (report.plan) AppendPlanSection(*report.plan, color, device, &out);
  return out;
}

}  // namespace strag::report
