// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/byte_pack.h"
#include "base/f32.h"
#include "mitigate/planner.h"
#include "report/input_checks.h"
#include "report/report.h"

namespace strag::report {
namespace {

// GPUs = the job's world size (dp and pp as analysed, tp and cp from the
// metadata, only the traced ranks when coverage is short); price from the
// options, else the metadata's gpu_hour_usd, else the default.
Result<econ::StepCost> JobCost(const ReportInput& in,
                               const whatif::WhatIfResult& result,
                               const ReportOptions& options) {
  trace::JobMeta shape = in.meta;
  shape.dp = result.dp;
  shape.pp = result.pp;
  // A CPU job (gloo traces) has no default price: its dollars are only
  // shown when a price is given.
  const bool cpu = in.notes && in.notes->cpu_only;
  double price = cpu ? 0.0 : kDefaultUsdPerGpuHour;
  for (const auto& [key, value] : in.meta.raw) {
    if (key == "gpu_hour_usd") price = std::strtod(value.c_str(), nullptr);
  }
  if (options.usd_per_gpu_hour) price = *options.usd_per_gpu_hour;
  if (!(price >= 0)) {
    return InvalidInput("the GPU price must not be negative");
  }
  int64_t gpus = shape.WorldSize();
  if (!in.coverage.empty()) {
    gpus = static_cast<int64_t>(in.prepared.workers.size());
  }
  if (options.gpus) {
    if (*options.gpus < 1) return InvalidInput("GPUs: must be at least 1");
    gpus = *options.gpus;
  }
  if (!(options.run_days > 0)) {
    return InvalidInput("the run length must be positive");
  }
  econ::StepCost cost =
      econ::ComputeStepCost(PairwiseMean(result.step_t_observed),
                            PairwiseMean(result.step_t_ideal), gpus, price);
  econ::AddRunLength(options.run_days, &cost);
  return cost;
}

// The plan of the analysed job, priced like the report.
Result<mitigate::Plan> PlanOf(const ReportInput& in, const Report& report,
                              const ReportOptions& options) {
  ASSIGN_OR_RETURN(std::vector<int32_t> layers,
                   PlanLayers(*options.plan, in.meta));
  const mitigate::JobView job{
      .trace = in.prepared,
      .result = report.result,
      .diagnosis = report.diagnosis,
      .econ = {.gpus = report.cost.gpus,
               .usd_per_gpu_hour = report.cost.usd_per_gpu_hour,
               .gpus_per_node = GpusPerNode(in.meta),
               .horizon_hours = 24 * options.run_days,
               .checkpoint_interval_s = options.plan->checkpoint_interval_s,
               .restart_s = options.plan->restart_s},
      .layers = std::move(layers),
      .token_cap = options.plan->token_cap,
  };
  return mitigate::MakePlan(job, options.whatif.threads);
}

// The report's what-if result and cost: the metadata checked first (a
// contradiction that would change the cost or the scope stops there, its
// warnings kept in `meta_warnings`), then `analyze`, whose error is about
// the input and so names it.
Result<Report> AnalysedReport(
    const ReportInput& in, const ReportOptions& options,
    const std::function<Result<whatif::WhatIfResult>()>& analyze,
    std::vector<std::string>* meta_warnings) {
  ASSIGN_OR_RETURN(
      *meta_warnings,
      CheckMeta(in.meta, in.prepared, in.notes ? &*in.notes : nullptr));
  Result<whatif::WhatIfResult> analysed = analyze();
  if (!analysed.ok()) return analysed.status().WithContext(in.source);
  Report report;
  report.result = std::move(analysed).value();
  ASSIGN_OR_RETURN(report.cost, JobCost(in, report.result, options));
  return report;
}

// The input's source, metadata and notes moved into the report, after its
// own warnings the metadata's.
Report Finished(Report report, ReportInput* in,
                std::vector<std::string> meta_warnings) {
  for (std::string& w : meta_warnings) report.warnings.push_back(std::move(w));
  report.source = std::move(in->source);
  report.meta = std::move(in->meta);
  report.notes = std::move(in->notes);
  return report;
}

// The diagnosis of the analysed job from its trace's evidence (the whole
// trace's, or built window by window: the same numbers).
diagnose::Diagnosis DiagnoseJob(const ReportInput& in,
                                const diagnose::TraceEvidence& evidence,
                                const whatif::WhatIfResult& result,
                                const ReportOptions& options) {
  diagnose::Diagnosis d = diagnose::Diagnose(
      evidence, result,
      {.gpus_per_node = GpusPerNode(in.meta),
       .gpus_per_node_assumed =
           !HasGpusPerNode(in.meta) && in.prepared.topology.hosts.empty(),
       .tp = in.meta.tp,
       .threads = options.whatif.threads});
  if (!in.coverage.empty()) diagnose::WithoutDiagnosis(in.coverage, &d);
  return d;
}

// A timeline as bytes, field by field (no padding travels), and back.
void PackTimeline(const whatif::Timeline& t, BytePacker* out) {
  out->Put<uint8_t>(static_cast<uint8_t>(t.layout));
  out->Put<int64_t>(t.step);
  out->Put<double>(t.step_time_s);
  out->Put<double>(t.ideal_step_time_s);
  out->Put<uint64_t>(t.ops.size());
  for (const whatif::TimelineOp& op : t.ops) {
    out->Put<int32_t>(op.rank), out->Put<int32_t>(op.dp);
    out->Put<int32_t>(op.pp), out->Put<uint8_t>(static_cast<uint8_t>(op.type));
    out->Put<int32_t>(op.seq_id), out->Put<int32_t>(op.microbatch);
    out->Put<uint8_t>(op.comm), out->Put<double>(op.start_s);
    out->Put<double>(op.end_s), out->Put<double>(op.ideal_start_s);
    out->Put<double>(op.ideal_end_s), out->Put<int64_t>(op.waited_for);
    out->Put<uint8_t>(op.on_critical_path);
  }
}

// The bytes PackTimeline writes per op.
constexpr size_t kPackedOpBytes = 3 * 4 + 1 + 2 * 4 + 1 + 4 * 8 + 8 + 1;

// False for bytes that are not a packed timeline.
bool UnpackTimeline(ByteUnpacker* in, whatif::Timeline* t) {
  t->layout = static_cast<whatif::Layout>(in->Get<uint8_t>());
  t->step = in->Get<int64_t>();
  t->step_time_s = in->Get<double>();
  t->ideal_step_time_s = in->Get<double>();
  const auto n = in->Get<uint64_t>();
  if (!in->ok() || n > in->remaining() / kPackedOpBytes) return false;
  t->ops.resize(n);
  for (whatif::TimelineOp& op : t->ops) {
    op.rank = in->Get<int32_t>(), op.dp = in->Get<int32_t>();
    op.pp = in->Get<int32_t>();
    op.type = static_cast<trace::OpType>(in->Get<uint8_t>());
    op.seq_id = in->Get<int32_t>(), op.microbatch = in->Get<int32_t>();
    op.comm = in->Get<uint8_t>() != 0, op.start_s = in->Get<double>();
    op.end_s = in->Get<double>(), op.ideal_start_s = in->Get<double>();
    op.ideal_end_s = in->Get<double>(), op.waited_for = in->Get<int64_t>();
    op.on_critical_path = in->Get<uint8_t>() != 0;
  }
  return in->done();
}

// What a pass over a windowed job gives the report: the trace's evidence
// and the timelines of the chosen steps.
struct WindowsRead {
  diagnose::TraceEvidence evidence;
  std::vector<whatif::Timeline> timelines;  // one per step asked for
};

// One more pass over the windows: the evidence of every step and the
// timelines of `steps` (indices into the job's steps), on `threads`
// threads. Under a collective each process reads its windows (its share
// of the steps), and every process gets the whole job's evidence and every
// timeline.
Result<WindowsRead> ReadWindows(const whatif::PreparedTrace& shape,
                                whatif::WindowSource* windows,
                                const std::vector<double>& ideal_cost,
                                const std::vector<size_t>& steps,
                                size_t threads, Collective* collective) {
  diagnose::EvidenceBuilder builder(shape);
  std::vector<std::optional<whatif::Timeline>> found(steps.size());
  const Status walked =
      windows->ForEachWindow([&](const whatif::PreparedTrace& w) -> Status {
        builder.AddWindow(w, threads);
        if (w.steps.empty()) return Status::Ok();
        const auto first = static_cast<size_t>(
            std::lower_bound(shape.steps.begin(), shape.steps.end(),
                             w.steps.front()) -
            shape.steps.begin());
        for (size_t k = 0; k < steps.size(); ++k) {
          if (steps[k] < first || steps[k] >= first + w.steps.size()) continue;
          ASSIGN_OR_RETURN(
              found[k], whatif::BuildTimeline(w, steps[k] - first, ideal_cost));
        }
        return Status::Ok();
      });
  // A failure here is still taken to Finish, where every process learns
  // that one failed (and none waits for the others alone).
  if (!walked.ok()) builder.Fail();
  Result<diagnose::TraceEvidence> evidence =
      std::move(builder).Finish(collective);
  RETURN_IF_ERROR(walked);
  WindowsRead out;
  ASSIGN_OR_RETURN(out.evidence, std::move(evidence));
  for (std::optional<whatif::Timeline>& t : found) {
    if (collective != nullptr && collective->size() > 1) {
      // Built by the process holding the step: sent to all.
      BytePacker mine;
      if (t) PackTimeline(*t, &mine);
      ASSIGN_OR_RETURN(const std::vector<std::string> all,
                       collective->AllGather(mine.Take()));
      for (const std::string& bytes : all) {
        if (bytes.empty()) continue;
        ByteUnpacker in(bytes);
        t.emplace();
        if (!UnpackTimeline(&in, &*t)) {
          return Internal("timeline: damaged bytes");
        }
      }
    }
    if (!t) return Internal("timeline: no window holds the step");
    out.timelines.push_back(std::move(*t));
  }
  return out;
}

}  // namespace

Result<std::vector<int32_t>> ParseLayerList(std::string_view text,
                                            std::string_view what) {
  std::vector<int32_t> out;
  std::string item;
  auto flush = [&]() -> Status {
    if (item.empty()) return Status::Ok();
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (*end != 0 || n < 1 || n > (1 << 20)) {
      return InvalidInput(std::string(what) + ": \"" + item +
                          "\" is not a layer count (1 to 1048576)");
    }
    out.push_back(static_cast<int32_t>(n));
    item.clear();
    return Status::Ok();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '[' || c == ']') {
      RETURN_IF_ERROR(flush());
    } else {
      item.push_back(c);
    }
  }
  RETURN_IF_ERROR(flush());
  if (out.empty()) return InvalidInput(std::string(what) + ": no layer count");
  return out;
}

Result<std::vector<int32_t>> PlanLayers(const PlanOptions& options,
                                        const trace::JobMeta& meta) {
  if (!options.layers.empty()) return options.layers;
  for (const char* key : {"layers_per_stage", "num_layers"}) {
    for (const auto& [k, value] : meta.raw) {
      if (k == key) return ParseLayerList(value, std::string("metadata ") + key);
    }
  }
  return std::vector<int32_t>{};
}

Result<whatif::IdealPool> ParseIdealPool(std::string_view name, bool profiler) {
  if (name == "optype") return whatif::IdealPool::kOpType;
  if (name == "optype-stage") return whatif::IdealPool::kOpTypeStage;
  if (name == "op") return whatif::IdealPool::kOp;
  if (name == "position") return whatif::IdealPool::kPosition;
  if (name == "role" && profiler) return whatif::IdealPool::kRole;
  return InvalidInput(
      "expected optype, optype-stage, op, position or (Kineto traces) role, "
      "got \"" +
      std::string(name) + "\"");
}

bool HasGpusPerNode(const trace::JobMeta& meta) {
  for (const auto& [key, value] : meta.raw) {
    if (key == "gpus_per_node") return true;
  }
  return false;
}

int32_t GpusPerNode(const trace::JobMeta& meta) {
  for (const auto& [key, value] : meta.raw) {
    if (key == "gpus_per_node") {
      const long n = std::strtol(value.c_str(), nullptr, 10);
      if (n > 0 && n < (1 << 20)) return static_cast<int32_t>(n);
    }
  }
  return 8;
}

Result<std::vector<size_t>> ChooseSteps(const whatif::PreparedTrace& trace,
                                        const whatif::WhatIfResult& result,
                                        const std::vector<int64_t>& step_ids) {
  std::vector<size_t> out;
  if (step_ids.empty()) {
    const auto& s = result.slowdown_per_step;
    if (s.empty()) return out;
    const auto worst =
        static_cast<size_t>(std::max_element(s.begin(), s.end()) - s.begin());
    const auto best =
        static_cast<size_t>(std::min_element(s.begin(), s.end()) - s.begin());
    out.push_back(worst);
    if (best != worst) out.push_back(best);
    return out;
  }
  for (int64_t step : step_ids) {
    const auto it =
        std::lower_bound(trace.steps.begin(), trace.steps.end(), step);
    if (it == trace.steps.end() || *it != step) {
      return InvalidInput("step " + std::to_string(step) +
                          " is not a step of the trace");
    }
    out.push_back(static_cast<size_t>(it - trace.steps.begin()));
  }
  return out;
}

Result<Report> BuildReport(ReportInput in, const ReportOptions& options) {
  std::vector<std::string> meta_warnings;
  ASSIGN_OR_RETURN(
      Report report,
      AnalysedReport(
          in, options,
          [&] { return whatif::Analyze(in.prepared, options.whatif); },
          &meta_warnings));
  const whatif::WhatIfResult& result = report.result;
  report.diagnosis =
      DiagnoseJob(in, diagnose::EvidenceOf(in.prepared, options.whatif.threads),
                  result, options);
  if (!in.segment_ops.empty()) {
    report.kernel_detail =
        ExplainRanks(in.segment_ops, in.prepared.topology,
                     RanksToExplain(report.diagnosis));
  }
  ASSIGN_OR_RETURN(const std::vector<size_t> slowest,
                   ChooseSteps(in.prepared, result, {}));
  if (!slowest.empty()) {
    ASSIGN_OR_RETURN(
        whatif::Timeline timeline,
        whatif::BuildTimeline(in.prepared, slowest[0], result.ideal_node_cost));
    diagnose::AddWorstStep(timeline, &report.diagnosis);
    report.slowest_step = std::move(timeline);
  }
  if (options.timelines) {
    ASSIGN_OR_RETURN(const std::vector<size_t> steps,
                     ChooseSteps(in.prepared, result, options.timeline_steps));
    for (size_t k : steps) {
      ASSIGN_OR_RETURN(
          whatif::Timeline t,
          whatif::BuildTimeline(in.prepared, k, result.ideal_node_cost));
      report.timelines.push_back(std::move(t));
    }
  }
  if (options.plan && !in.coverage.empty()) {
    report.plan.emplace();
    report.plan->withheld = in.coverage;
  } else if (options.plan) {
    Result<mitigate::Plan> plan = PlanOf(in, report, options);
    if (!plan.ok()) return plan.status().WithContext(in.source);
    report.plan = std::move(plan).value();
  }
  return Finished(std::move(report), &in, std::move(meta_warnings));
}

Result<Report> BuildWindowedReport(ReportInput in,
                                   whatif::WindowSource* windows,
                                   const ReportOptions& options,
                                   const std::string& for_a_plan) {
  std::vector<std::string> meta_warnings;
  ASSIGN_OR_RETURN(
      Report report,
      AnalysedReport(in, options,
                     [&] {
                       return whatif::AnalyzeWindows(in.prepared, windows,
                                                     options.whatif);
                     },
                     &meta_warnings));
  const whatif::WhatIfResult& result = report.result;
  // The slowest step first, then the timelines asked for.
  ASSIGN_OR_RETURN(const std::vector<size_t> ranked,
                   ChooseSteps(in.prepared, result, {}));
  std::vector<size_t> steps;
  if (!ranked.empty()) steps.push_back(ranked.front());
  const size_t slowest = steps.size();
  if (options.timelines) {
    ASSIGN_OR_RETURN(const std::vector<size_t> asked,
                     ChooseSteps(in.prepared, result, options.timeline_steps));
    steps.insert(steps.end(), asked.begin(), asked.end());
  }
  Result<WindowsRead> read =
      ReadWindows(in.prepared, windows, result.ideal_node_cost, steps,
                  options.whatif.threads, options.whatif.collective);
  if (!read.ok()) return read.status().WithContext(in.source);
  report.diagnosis = DiagnoseJob(in, read->evidence, result, options);
  if (slowest == 1) {
    diagnose::AddWorstStep(read->timelines.front(), &report.diagnosis);
    report.slowest_step = read->timelines.front();
  }
  for (size_t k = slowest; k < read->timelines.size(); ++k) {
    report.timelines.push_back(std::move(read->timelines[k]));
  }
  if (options.plan) {
    report.plan.emplace();
    report.plan->withheld =
        "analysed in windows of steps: the plan's policies need the whole "
        "trace in memory (" +
        for_a_plan + ")";
  }
  return Finished(std::move(report), &in, std::move(meta_warnings));
}

}  // namespace strag::report
