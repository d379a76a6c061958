// SPDX-License-Identifier: Apache-2.0
#include "report/render/terminal_summary.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <numeric>
#include <vector>

#include "base/f32.h"

namespace strag::report {
namespace {

using whatif::Counterfactual;
using whatif::Decomposition;
using whatif::WhatIfResult;

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

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
  *out += Format("  %s (S if only this one were left unfixed)\n", title);
  const std::vector<size_t> order = Descending(d.slowdown);
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(top); ++k) {
    const size_t g = order[k];
    const std::string label = prefix + d.keys[g];
    *out += Format("    %-30s %6.3f   waste %5.1f%%\n", label.c_str(),
                   d.slowdown[g],
                   100.0 * (1.0 - 1.0 / d.slowdown[g]));
  }
}

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < 8; ++i) {
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  if (ranks.size() > 8) s += Format(", ... (%zu ranks)", ranks.size());
  return s;
}

void Explain(std::string* out, const char* metric, const char* what,
             const Counterfactual& c) {
  *out += Format("  %-4s = %6.3f   fix only %s: step %.4g s -> %.4g s "
                 "(ideal %.4g s); un-fix only it: %.3f\n",
                 metric, c.rem, what, c.t_ori, c.t_rem, c.t_ideal, c.add);
}

}  // namespace

std::string RenderTerminalSummary(const WhatIfResult& r,
                                  const trace::JobMeta& meta,
                                  const SummaryOptions& options) {
  std::string out;
  out += Format("strag analyze: %s\n", options.source.c_str());
  out += Format("  job: DP %d x PP %d x TP %d x CP %d (VPP %d), %zu traced "
                "workers, %zu steps, %zu ops\n\n",
                r.dp, r.pp, meta.tp, meta.cp, r.vpp, r.workers.size(),
                r.steps.size(), r.num_ops);
  const double t = PairwiseMean(r.step_t_replayed);
  const double obs = PairwiseMean(r.step_t_observed);
  out += Format("  slowdown S        %7.4f   mean step %.4g s replayed vs "
                "%.4g s ideal\n",
                r.slowdown, t, r.step_t_ideal.empty() ? 0.0 : r.step_t_ideal[0]);
  out += Format("  waste             %6.1f%%   of the job's GPU time is lost "
                "to stragglers (1 - 1/S)\n",
                100.0 * r.waste);
  out += Format("  launch slowdown   %7.4f   observed %.4g s vs replayed: "
                "untraced host time\n\n",
                r.launch_slowdown, obs);
  Ranking(&out, "by op type", "", r.by_optype, options.top);
  Ranking(&out, "by stage", "stage ", r.by_stage, options.top);
  Ranking(&out, "by DP rank", "dp ", r.by_dp_rank, options.top);
  out += "  worst workers (min of their DP rank's and stage's S)\n";
  for (size_t k = 0; k < r.workers.size() && k < static_cast<size_t>(options.top);
       ++k) {
    const whatif::WorkerScore& w = r.workers[k];
    out += Format("    rank %-6d dp %-4d stage %-3d %6.3f\n", w.rank, w.dp,
                  w.pp, w.score);
  }
  out += "\n";
  const std::string worst = "ranks " + RankList(r.fix_worst_workers.ranks);
  Explain(&out, "M_W", worst.c_str(), r.fix_worst_workers);
  Explain(&out, "M_S", "the last stage", r.fix_last_stage);
  for (const Counterfactual& c : r.selected) {
    out += Format("  %-5s %s: rem %.3f (T_rem %.4g s), add %.3f (T_add "
                  "%.4g s)\n",
                  c.unfix ? "unfix" : "fix", c.selector.c_str(), c.rem,
                  c.t_rem, c.add, c.t_add);
  }
  out += "\n  slowest steps (S of the step)\n";
  const std::vector<size_t> order = Descending(r.slowdown_per_step);
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(options.top);
       ++k) {
    const size_t s = order[k];
    out += Format("    step %-8lld %6.3f   observed %.4g s, replayed %.4g s\n",
                  static_cast<long long>(r.steps[s]), r.slowdown_per_step[s],
                  r.step_t_observed[s], r.step_t_replayed[s]);
  }
  return out;
}

}  // namespace strag::report
