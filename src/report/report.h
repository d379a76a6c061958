// SPDX-License-Identifier: Apache-2.0
// Report: everything a front-end shows about one analysed job (the what-if
// result, the diagnosis, the costs, what was wrong with the input, the
// timelines of chosen steps), and BuildReport, the one pipeline every
// front-end calls: `strag analyze`, `strag simulate --analyze`, and later
// the planner, the collector and the Python module. Renderers
// (report/render/) take a `const Report&` and compute nothing.
//
// Pure: no I/O. Cost: the what-if analysis (whatif/analysis.h), then one
// timeline per chosen step.

#ifndef STRAG_SRC_REPORT_REPORT_H_
#define STRAG_SRC_REPORT_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "diagnose/diagnosis.h"
#include "econ/step_cost.h"
#include "mitigate/plan.h"
#include "report/input_notes.h"
#include "report/kernel_detail.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"
#include "whatif/timeline.h"

namespace strag::report {

inline constexpr double kDefaultUsdPerGpuHour = 2.0;

// A job as read, ready for the analysis.
struct ReportInput {
  std::string source = {};  // what was analysed: a path, "simulated NAME"
  whatif::PreparedTrace prepared = {};
  trace::JobMeta meta = {};  // layout flags applied
  // Profiler traces: what was read and what was wrong with it.
  std::optional<InputNotes> notes = {};
  // Why the input cannot carry a diagnosis (too few ranks traced), or "":
  // then the numbers describe the traced ranks only, and costs too.
  std::string coverage = {};
  // Profiler traces: what each compute segment is made of (per-name
  // totals), for the kernel detail; empty for an ops CSV.
  graph::SegmentOps segment_ops = {};
};

// The planner's options (`--plan`, `strag plan`).
struct PlanOptions {
  // Transformer layers: the total (split evenly) or per stage; empty: the
  // metadata's num_layers / layers_per_stage, else unknown.
  std::vector<int32_t> layers = {};
  double checkpoint_interval_s = 3600;  // progress lost on a restart: half
  double restart_s = 600;               // stop, reschedule, load, warm up
  int64_t token_cap = 0;  // tokens per microbatch; 0: the largest traced
};

struct ReportOptions {
  whatif::WhatIfOptions whatif = {};  // ideal pool, fix / unfix, threads
  // The job's price and size: GPUs (default: its world size), dollars per
  // GPU-hour (default: the metadata's gpu_hour_usd, else 2.00), run length.
  std::optional<int64_t> gpus = {};
  std::optional<double> usd_per_gpu_hour = {};
  double run_days = 1.0;
  // Timelines for the Perfetto view: none, or these step ids (empty: the
  // slowest and the fastest step).
  bool timelines = false;
  std::vector<int64_t> timeline_steps = {};
  // The ranked mitigations (mitigate/planner.h); none when absent.
  std::optional<PlanOptions> plan = {};
};

struct Report {
  std::string source;
  trace::JobMeta meta;
  whatif::WhatIfResult result;
  econ::StepCost cost;
  diagnose::Diagnosis diagnosis;
  std::optional<InputNotes> notes;
  // The slowest step's ops, actual vs ideal (HTML report, diagnosis detail);
  // absent without steps.
  std::optional<whatif::Timeline> slowest_step;
  std::vector<whatif::Timeline> timelines;  // ReportOptions::timelines
  std::optional<mitigate::Plan> plan;       // ReportOptions::plan
  // Profiler traces: the named stragglers' compute, kernel by kernel,
  // against their stage's median rank (kernel_detail.h); else empty.
  std::vector<KernelDetail> kernel_detail;
  // Found while building: what in the metadata the trace contradicts.
  std::vector<std::string> warnings;
};

// Analyses `input` and assembles the report. kInvalidInput for options that
// do not fit the job (a timeline step the trace does not have, a
// non-positive run length or GPU count).
Result<Report> BuildReport(ReportInput input, const ReportOptions& options);

// BuildReport for a job given in windows of steps (whatif::AnalyzeWindows;
// `input.prepared` is the job's shape, without per-slot arrays): the
// what-if result, the costs, the diagnosis and the timelines, bit for bit
// as BuildReport's (the diagnosis from the trace's evidence, built in one
// more pass over the windows, diagnose/trace_evidence.h); only the plan is
// withheld (its policies rewrite every op), saying how to get one
// (`for_a_plan`). Under the options' collective, each process holding its
// share of the steps, every process gets the whole job's report.
Result<Report> BuildWindowedReport(
    ReportInput input, whatif::WindowSource* windows,
    const ReportOptions& options,
    const std::string& for_a_plan = "run without --window-ops for a plan");

// The steps to show (indices into the trace's steps): `step_ids`, or when
// empty the slowest and the fastest step by S of the step.
Result<std::vector<size_t>> ChooseSteps(const whatif::PreparedTrace& trace,
                                        const whatif::WhatIfResult& result,
                                        const std::vector<int64_t>& step_ids);

// "GPU", or "CPU" for a job of CPU-only profiler traces (gloo): the word
// the reports use for the devices whose time is lost.
inline const char* DeviceWord(const Report& report) {
  return report.notes && report.notes->cpu_only ? "CPU" : "GPU";
}

// The metadata's gpus_per_node, else 8; whether the metadata has one.
int32_t GpusPerNode(const trace::JobMeta& meta);
bool HasGpusPerNode(const trace::JobMeta& meta);

// The layers the plan uses: the options', else the metadata's
// layers_per_stage ("8,8,9,7" or "[8, 8, 9, 7]") or num_layers. kInvalidInput
// for a metadata value that is not a list of positive integers.
Result<std::vector<int32_t>> PlanLayers(const PlanOptions& options,
                                        const trace::JobMeta& meta);

// The ideal pool a user names (`--pool`, `pool=`): optype, optype-stage,
// op, position, or role (profiler traces only); kInvalidInput listing them.
Result<whatif::IdealPool> ParseIdealPool(std::string_view name, bool profiler);

// "8,8,9,7", "[8, 8, 9, 7]" or "64": layer counts (1 to 2^20) for
// --layers and the metadata; errors are kInvalidInput prefixed with `what`.
Result<std::vector<int32_t>> ParseLayerList(std::string_view text,
                                            std::string_view what);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_REPORT_H_
