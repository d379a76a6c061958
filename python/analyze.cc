// SPDX-License-Identifier: Apache-2.0
#include "python/analyze.h"

#include <cmath>
#include <utility>

#include "ingest/common/input_limits.h"
#include "load/job_files.h"
#include "report/render/analysis_json.h"
#include "report/render/plan_json.h"

namespace strag::python {
namespace {

Status InRange(const char* name, const std::optional<int64_t>& v, int64_t min,
               int64_t max) {
  if (v && *v < min) {
    return InvalidInput(std::string(name) + ": " + std::to_string(*v) +
                        " must be at least " + std::to_string(min));
  }
  if (v && *v > max) {
    return InvalidInput(std::string(name) + ": " + std::to_string(*v) +
                        " must be at most " + std::to_string(max));
  }
  return Status::Ok();
}

Status Finite(const char* name, const std::optional<double>& v) {
  if (v && !std::isfinite(*v)) {
    return InvalidInput(std::string(name) + ": \"" + std::to_string(*v) +
                        "\" is not a number");
  }
  return Status::Ok();
}

// As --pool: the published per-op-type pool by default, role for profiler
// traces.
Result<whatif::IdealPool> Pool(const AnalyzeArgs& a, bool profiler) {
  Result<whatif::IdealPool> pool = report::ParseIdealPool(
      a.pool.value_or(profiler ? "role" : "optype"), profiler);
  if (!pool.ok()) return pool.status().WithContext("pool");
  return pool;
}

// Minutes in [0, 1e6], as --checkpoint-interval-min and --restart-min.
Result<double> Minutes(const char* name, const std::optional<double>& v,
                       double fallback) {
  RETURN_IF_ERROR(Finite(name, v));
  if (!v) return fallback;
  if (!(*v >= 0 && *v <= 1e6)) {
    return InvalidInput(std::string(name) +
                        ": must be between 0 and 1000000 minutes");
  }
  return *v;
}

Result<std::optional<report::PlanOptions>> Plan(const AnalyzeArgs& a) {
  if (!a.plan) {
    if (a.layers || a.checkpoint_interval_min || a.restart_min ||
        a.token_cap) {
      return InvalidInput(
          "layers, checkpoint_interval_min, restart_min and token_cap need "
          "plan=True");
    }
    return std::optional<report::PlanOptions>();
  }
  report::PlanOptions o;
  if (a.layers) {
    ASSIGN_OR_RETURN(o.layers, report::ParseLayerList(*a.layers, "layers"));
  }
  ASSIGN_OR_RETURN(const double ckpt, Minutes("checkpoint_interval_min",
                                              a.checkpoint_interval_min, 60));
  ASSIGN_OR_RETURN(const double restart,
                   Minutes("restart_min", a.restart_min, 10));
  RETURN_IF_ERROR(InRange("token_cap", a.token_cap, 1, int64_t{1} << 40));
  o.token_cap = a.token_cap.value_or(0);
  o.checkpoint_interval_s = 60 * ckpt;
  o.restart_s = 60 * restart;
  return std::optional<report::PlanOptions>(o);
}

// The report options in the order cli/report_flags.cc checks them.
Result<report::ReportOptions> Options(const AnalyzeArgs& a, bool profiler) {
  report::ReportOptions o;
  o.whatif.fix = a.fix;
  o.whatif.unfix = a.unfix;
  RETURN_IF_ERROR(InRange("threads", a.threads, 1, 256));
  o.whatif.threads = static_cast<size_t>(a.threads.value_or(0));
  ASSIGN_OR_RETURN(o.whatif.pool, Pool(a, profiler));
  RETURN_IF_ERROR(Finite("usd_per_gpu_hour", a.usd_per_gpu_hour));
  if (a.usd_per_gpu_hour && *a.usd_per_gpu_hour < 0) {
    return InvalidInput("usd_per_gpu_hour: must not be negative");
  }
  o.usd_per_gpu_hour = a.usd_per_gpu_hour;
  RETURN_IF_ERROR(InRange("gpus", a.gpus, 1, (int64_t{1} << 31) - 1));
  o.gpus = a.gpus;
  RETURN_IF_ERROR(Finite("days", a.days));
  RETURN_IF_ERROR(Finite("hours", a.hours));
  if (a.days && a.hours) return InvalidInput("give days or hours, not both");
  o.run_days = a.days ? *a.days : a.hours ? *a.hours / 24.0 : 1.0;
  if (!(o.run_days > 0)) return InvalidInput("days / hours: must be positive");
  ASSIGN_OR_RETURN(o.plan, Plan(a));
  return o;
}

Status Limit(const char* name, const std::optional<int64_t>& v,
             uint64_t* limit) {
  if (!v) return Status::Ok();
  if (*v < 1024 || static_cast<uint64_t>(*v) > ingest::kMaxInputLimitBytes) {
    return InvalidInput(std::string(name) +
                        ": expected a size from 1K to 2G bytes, got " +
                        std::to_string(*v));
  }
  *limit = static_cast<uint64_t>(*v);
  return Status::Ok();
}

Result<ingest::InputLimits> Limits(const AnalyzeArgs& a) {
  ingest::InputLimits limits;
  RETURN_IF_ERROR(Limit("max_line_bytes", a.max_line_bytes,
                        &limits.max_line_bytes));
  RETURN_IF_ERROR(Limit("max_token_bytes", a.max_token_bytes,
                        &limits.max_token_bytes));
  RETURN_IF_ERROR(Limit("max_event_bytes", a.max_event_bytes,
                        &limits.max_event_bytes));
  return limits;
}

// --dp/--pp/--tp/--cp/--vpp over the metadata.
Status ApplyLayout(const AnalyzeArgs& a, trace::JobMeta* meta) {
  const std::pair<const char*, std::pair<const std::optional<int64_t>*,
                                         int32_t*>>
      fields[] = {{"dp", {&a.dp, &meta->dp}},
                  {"pp", {&a.pp, &meta->pp}},
                  {"tp", {&a.tp, &meta->tp}},
                  {"cp", {&a.cp, &meta->cp}},
                  {"vpp", {&a.vpp, &meta->vpp}}};
  for (const auto& [name, field] : fields) {
    const auto& [value, out] = field;
    RETURN_IF_ERROR(InRange(name, *value, 1, int64_t{1} << 24));
    if (*value) *out = static_cast<int32_t>(**value);
  }
  return Status::Ok();
}

Result<std::map<std::string, int32_t>> RankMap(const AnalyzeArgs& a) {
  std::map<std::string, int32_t> map;
  for (const auto& [file, rank] : a.rank_map) {
    if (file.empty() || rank < 0 || rank > INT32_MAX) {
      return InvalidInput("rank_map: expected {file: rank >= 0}, got \"" +
                          file + "\": " + std::to_string(rank));
    }
    map[file] = static_cast<int32_t>(rank);
  }
  return map;
}

}  // namespace

Result<Analysis> Analyze(const AnalyzeArgs& args) {
  const std::vector<std::string>& inputs = args.inputs;
  const bool kineto = load::IsKinetoJob(inputs);
  if (inputs.empty() || (inputs.size() > 1 && !kineto)) {
    return InvalidInput(
        "analyze needs one ops CSV, or Kineto traces (files or a folder)");
  }
  ASSIGN_OR_RETURN(const report::ReportOptions options, Options(args, kineto));
  ASSIGN_OR_RETURN(const ingest::InputLimits limits, Limits(args));
  const std::string meta_path =
      args.meta.value_or(kineto ? "" : load::FindMeta(inputs[0]));
  ASSIGN_OR_RETURN(trace::JobMeta meta, load::ReadMeta(meta_path));
  RETURN_IF_ERROR(ApplyLayout(args, &meta));
  load::JobRead read{.inputs = inputs,
                     .meta = std::move(meta),
                     .layout_given = args.dp || args.pp || !meta_path.empty(),
                     .hosts_file = args.hosts.value_or(""),
                     .limits = limits,
                     .threads = options.whatif.threads};
  if (kineto) {
    ASSIGN_OR_RETURN(read.rank_map, RankMap(args));
  }
  Analysis out;
  ASSIGN_OR_RETURN(report::ReportInput in,
                   load::ReadJob(std::move(read), &out.ops));
  if (in.notes) out.warnings = in.notes->warnings;
  ASSIGN_OR_RETURN(out.report, report::BuildReport(std::move(in), options));
  out.warnings.insert(out.warnings.end(), out.report.warnings.begin(),
                      out.report.warnings.end());
  out.json = report::RenderAnalysisJson(out.report);
  if (out.report.plan) out.plan_json = report::RenderPlanJson(out.report);
  return out;
}

}  // namespace strag::python
