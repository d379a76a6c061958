// SPDX-License-Identifier: Apache-2.0
#include "cli/report_flags.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "base/str_format.h"
#include "report/render/analysis_json.h"
#include "report/render/html_report.h"
#include "report/render/perfetto_json.h"
#include "report/render/plan_json.h"
#include "report/render/plan_text.h"
#include "report/render/terminal_summary.h"

namespace strag::cli {

const char kReportFlagsUsage[] =
    "  --json FILE           write the analysis JSON (strag.analysis/1)\n"
    "  --fix SEL             report 'fix only SEL' (repeatable), e.g. rank=5,\n"
    "                        stage=3, dp=2, optype=backward-compute, "
    "step=821,\n"
    "                        stage=3,step=821 (all must match), rank=0+17 "
    "(either)\n"
    "  --unfix SEL           report 'un-fix only SEL' (repeatable)\n"
    "  --pool POOL           ideal value pooled per optype (published, "
    "default),\n"
    "                        optype-stage, op, position (same position of\n"
    "                        the step on every rank) or role (Kineto default:\n"
    "                        same position on the ranks of a stage, outliers\n"
    "                        left out, stages evened)\n"
    "  --top N               rows per ranking in the summary (default 5)\n"
    "  --threads N           threads for the replays (default: one per core;\n"
    "                        results do not depend on it)\n"
    "  --gpus N              GPUs of the job (default: the world size)\n"
    "  --days D | --hours H  run length for the wasted GPU-hours and dollars\n"
    "                        (default: one day)\n"
    "  --usd-per-gpu-hour X  GPU price for the cost lines (default: the\n"
    "                        metadata's gpu_hour_usd, else 2.00; a CPU job of\n"
    "                        gloo traces: the price of a CPU-hour, else none)\n"
    "  --html FILE           self-contained HTML report (works offline)\n"
    "  --perfetto FILE       Chrome-trace JSON of chosen steps (actual vs "
    "ideal,\n"
    "                        critical-path arrows) for ui.perfetto.dev\n"
    "  --perfetto-steps A,B  steps to export (default: slowest and fastest)\n"
    "  --plan                rank the mitigations (as strag plan) in every\n"
    "                        output\n"
    "  --layers N|a,b,...    transformer layers, in all or per stage, for the\n"
    "                        stage repartition (default: the metadata's\n"
    "                        num_layers / layers_per_stage)\n"
    "  --checkpoint-interval-min M  minutes between checkpoints: a restart\n"
    "                        loses half (default 60)\n"
    "  --restart-min M       minutes a restart takes (default 10)\n"
    "  --token-cap N         tokens a microbatch may hold when sequences are\n"
    "                        repacked (default: the largest traced one)\n"
    "  --quiet               print nothing (with --json)\n"
    "  FILE of --json, --html, --perfetto: '-' is standard output (one of\n"
    "  them at most; the summary then goes to stderr). Every output is whole\n"
    "  or absent: written to a temporary file beside it and renamed when all\n"
    "  outputs are complete; on an error none is written and existing files\n"
    "  stay as they were. An output that is one of the inputs is refused.\n";

namespace {

// Colour only on a terminal, and never with NO_COLOR set.
bool UseColor(FILE* stream) {
  return isatty(fileno(stream)) && std::getenv("NO_COLOR") == nullptr;
}

Result<whatif::IdealPool> ParsePool(const Flags& flags, bool profiler) {
  Result<whatif::IdealPool> pool = report::ParseIdealPool(
      flags.Get("pool").value_or(profiler ? "role" : "optype"), profiler);
  if (!pool.ok()) return pool.status().WithContext("flag --pool");
  return pool;
}

// "821,414": step ids.
Result<std::vector<int64_t>> ParseSteps(std::string_view text) {
  std::vector<int64_t> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view()
                                           : text.substr(comma + 1);
    int64_t step = 0;
    const auto [ptr, ec] =
        std::from_chars(item.data(), item.data() + item.size(), step);
    if (ec != std::errc() || ptr != item.data() + item.size()) {
      return InvalidInput("flag --perfetto-steps: \"" + std::string(item) +
                          "\" is not a step id");
    }
    out.push_back(step);
  }
  return out;
}

// A time flag in minutes, in [0, 1e6].
Result<double> Minutes(const Flags& flags, const char* name, double fallback) {
  ASSIGN_OR_RETURN(std::optional<double> v, flags.GetDouble(name));
  if (!v) return fallback;
  if (!(*v >= 0 && *v <= 1e6)) {
    return InvalidInput(std::string("flag --") + name +
                        ": must be between 0 and 1000000 minutes");
  }
  return *v;
}

}  // namespace

Result<std::optional<report::PlanOptions>> ParsePlanOptions(const Flags& flags,
                                                            bool always) {
  const bool given = flags.Has("layers") ||
                     flags.Has("checkpoint-interval-min") ||
                     flags.Has("restart-min") || flags.Has("token-cap");
  if (!always && !flags.Has("plan")) {
    if (given) {
      return InvalidInput(
          "flags --layers, --checkpoint-interval-min, --restart-min and "
          "--token-cap need --plan (or strag plan)");
    }
    return std::optional<report::PlanOptions>();
  }
  report::PlanOptions o;
  if (auto layers = flags.Get("layers")) {
    ASSIGN_OR_RETURN(o.layers,
                     report::ParseLayerList(*layers, "flag --layers"));
  }
  ASSIGN_OR_RETURN(const double ckpt,
                   Minutes(flags, "checkpoint-interval-min", 60));
  ASSIGN_OR_RETURN(const double restart, Minutes(flags, "restart-min", 10));
  ASSIGN_OR_RETURN(const std::optional<int64_t> cap,
                   flags.GetInt("token-cap", 1, int64_t{1} << 40));
  o.token_cap = cap.value_or(0);
  o.checkpoint_interval_s = 60 * ckpt;
  o.restart_s = 60 * restart;
  return std::optional<report::PlanOptions>(o);
}

void AddReportFlags(FlagSpec* spec) {
  for (const char* f :
       {"json", "html", "perfetto", "perfetto-steps", "fix", "unfix", "pool",
        "top", "threads", "gpus", "days", "hours", "usd-per-gpu-hour",
        "layers", "checkpoint-interval-min", "restart-min", "token-cap"}) {
    spec->with_value.insert(f);
  }
  spec->booleans.insert("quiet");
  spec->booleans.insert("plan");
}

Result<std::optional<double>> UsdPerGpuHour(const Flags& flags) {
  ASSIGN_OR_RETURN(std::optional<double> price,
                   flags.GetDouble("usd-per-gpu-hour"));
  if (price && *price < 0) {
    return InvalidInput("flag --usd-per-gpu-hour: must not be negative");
  }
  return price;
}

Result<report::ReportOptions> ParseReportOptions(const Flags& flags,
                                                 bool profiler, bool plan) {
  report::ReportOptions o;
  o.whatif.fix = flags.GetAll("fix");
  o.whatif.unfix = flags.GetAll("unfix");
  ASSIGN_OR_RETURN(std::optional<int64_t> threads,
                   flags.GetInt("threads", 1, 256));
  o.whatif.threads = static_cast<size_t>(threads.value_or(0));
  ASSIGN_OR_RETURN(o.whatif.pool, ParsePool(flags, profiler));
  // --top is used by the summary; checked here, before any work.
  RETURN_IF_ERROR(flags.GetInt("top", 0, 1'000'000).status());
  ASSIGN_OR_RETURN(o.usd_per_gpu_hour, UsdPerGpuHour(flags));
  // The largest world strag prices (ranks are int32).
  ASSIGN_OR_RETURN(o.gpus, flags.GetInt("gpus", 1, (int64_t{1} << 31) - 1));
  ASSIGN_OR_RETURN(std::optional<double> days, flags.GetDouble("days"));
  ASSIGN_OR_RETURN(std::optional<double> hours, flags.GetDouble("hours"));
  if (days && hours) return InvalidInput("give --days or --hours, not both");
  o.run_days = days ? *days : hours ? *hours / 24.0 : 1.0;
  if (!(o.run_days > 0)) {
    return InvalidInput("flags --days / --hours: must be positive");
  }
  ASSIGN_OR_RETURN(o.plan, ParsePlanOptions(flags, plan));
  o.timelines = flags.Has("perfetto");
  if (auto steps = flags.Get("perfetto-steps")) {
    ASSIGN_OR_RETURN(o.timeline_steps, ParseSteps(*steps));
  }
  return o;
}

Status DeclareReportOutputs(const Flags& flags, OutputFiles* out) {
  for (const char* flag : {"json", "html", "perfetto"}) {
    if (auto path = flags.Get(flag)) {
      RETURN_IF_ERROR(out->Declare(std::string("--") + flag, *path));
    }
  }
  return Status::Ok();
}

Status CheckTimelineSteps(const report::ReportOptions& options, int64_t first,
                          int64_t last) {
  for (int64_t step : options.timeline_steps) {
    if (step < first || step > last) {
      return InvalidInput("flag --perfetto-steps: step " +
                          std::to_string(step) + " is not a step of the job (" +
                          std::to_string(first) + ".." + std::to_string(last) +
                          ")");
    }
  }
  return Status::Ok();
}

Status WriteReport(const Flags& flags, const report::Report& report,
                   OutputFiles* out, ReportView view) {
  const bool plan = view == ReportView::kPlan;
  for (const std::string& w : report.warnings) {
    std::fprintf(stderr, "strag: warning: %s\n", Printable(w).c_str());
  }
  // Everything rendered first: nothing is written when a renderer fails.
  std::vector<std::pair<std::string, std::string>> files;
  if (auto json = flags.Get("json")) {
    files.emplace_back(*json, plan ? report::RenderPlanJson(report)
                                   : report::RenderAnalysisJson(report));
  }
  if (auto html = flags.Get("html")) {
    files.emplace_back(*html, report::RenderHtmlReport(report));
  }
  if (auto perfetto = flags.Get("perfetto")) {
    files.emplace_back(*perfetto, report::RenderPerfettoJson(report));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> top, flags.GetInt("top"));
  for (const auto& [path, text] : files) {
    RETURN_IF_ERROR(out->Write(path, text));
  }
  RETURN_IF_ERROR(out->Commit());
  if (!flags.Has("quiet")) {
    FILE* summary = out->uses_stdout() ? stderr : stdout;
    const std::string text =
        plan ? report::RenderPlanSummary(report, UseColor(summary))
             : report::RenderTerminalSummary(
                   report, {.top = static_cast<int>(top.value_or(5)),
                            .color = UseColor(summary)});
    std::fputs(text.c_str(), summary);
  }
  return Status::Ok();
}

}  // namespace strag::cli
