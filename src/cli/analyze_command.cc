// SPDX-License-Identifier: Apache-2.0
#include "cli/analyze_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "base/parallel_for.h"
#include "cli/flags.h"
#include "cli/job_cost.h"
#include "cli/kineto_input.h"
#include "cli/report_files.h"
#include "diagnose/diagnosis.h"
#include "ingest/common/file.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "report/render/analysis_json.h"
#include "report/render/html_report.h"
#include "report/render/perfetto_json.h"
#include "report/render/terminal_summary.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::cli {

const char kAnalyzeUsage[] =
    "usage: strag analyze TRACE [options]\n"
    "       strag analyze DIR | RANK.json[.gz] ... [options]\n"
    "  TRACE                 ops CSV (.csv or .csv.gz), see "
    "docs/formats/ops-csv.md\n"
    "  DIR, RANK.json[.gz]   PyTorch profiler (Kineto) traces, one per rank,\n"
    "                        or a folder of them: docs/formats/kineto.md\n"
    "  --meta FILE           job metadata YAML (default: meta-X.yaml next to\n"
    "                        trace-X.csv[.gz], or meta.yaml in its folder)\n"
    "  --dp/--pp/--tp/--cp/--vpp N   job layout (override the metadata; for\n"
    "                        Kineto traces, else inferred from their p2p)\n"
    "  --rank-map F=R,...    Kineto: the rank of each file (by file name) when\n"
    "                        the traces name none (default: file-name order)\n"
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
    "                        metadata's gpu_hour_usd, else 2.00)\n"
    "  --html FILE           self-contained HTML report (works offline)\n"
    "  --perfetto FILE       Chrome-trace JSON of chosen steps (actual vs "
    "ideal,\n"
    "                        critical-path arrows) for ui.perfetto.dev\n"
    "  --perfetto-steps A,B  steps to export (default: slowest and fastest)\n"
    "  --quiet               print nothing (with --json)\n";

namespace {

namespace fs = std::filesystem;

// meta-X.yaml for trace-X.csv[.gz], else meta.yaml in the same folder.
std::string FindMeta(const std::string& trace) {
  const fs::path path(trace);
  std::string name = path.filename().string();
  for (const char* ext : {".gz", ".csv"}) {
    if (name.size() > std::string(ext).size() && name.ends_with(ext)) {
      name.resize(name.size() - std::string(ext).size());
    }
  }
  std::vector<fs::path> candidates;
  if (name.starts_with("trace-")) {
    candidates.push_back(path.parent_path() /
                         ("meta-" + name.substr(6) + ".yaml"));
  }
  candidates.push_back(path.parent_path() / "meta.yaml");
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::exists(c, ec)) return c.string();
  }
  return "";
}

Status ApplyLayoutFlags(const Flags& flags, trace::JobMeta* meta) {
  const std::pair<const char*, int32_t*> fields[] = {{"dp", &meta->dp},
                                                     {"pp", &meta->pp},
                                                     {"tp", &meta->tp},
                                                     {"cp", &meta->cp},
                                                     {"vpp", &meta->vpp}};
  for (const auto& [name, field] : fields) {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, flags.GetInt(name));
    if (!v) continue;
    if (*v < 1 || *v > (1 << 24)) {
      return InvalidInput(std::string("flag --") + name + ": must be >= 1");
    }
    *field = static_cast<int32_t>(*v);
  }
  return Status::Ok();
}

Result<whatif::WhatIfOptions> ParseOptions(const Flags& flags, bool kineto) {
  whatif::WhatIfOptions options;
  options.fix = flags.GetAll("fix");
  options.unfix = flags.GetAll("unfix");
  ASSIGN_OR_RETURN(std::optional<int64_t> threads, flags.GetInt("threads"));
  if (threads && (*threads < 1 || *threads > 256)) {
    return InvalidInput("flag --threads: must be between 1 and 256");
  }
  options.threads = static_cast<size_t>(threads.value_or(0));
  const std::string pool =
      flags.Get("pool").value_or(kineto ? "role" : "optype");
  if (pool == "optype") {
    options.pool = whatif::IdealPool::kOpType;
  } else if (pool == "optype-stage") {
    options.pool = whatif::IdealPool::kOpTypeStage;
  } else if (pool == "op") {
    options.pool = whatif::IdealPool::kOp;
  } else if (pool == "position") {
    options.pool = whatif::IdealPool::kPosition;
  } else if (pool == "role" && kineto) {
    options.pool = whatif::IdealPool::kRole;
  } else {
    return InvalidInput(
        "flag --pool: expected optype, optype-stage, op, position or (Kineto "
        "traces) role, "
        "got \"" +
        pool + "\"");
  }
  return options;
}

// The table is released before the analysis: only the prepared arrays are
// needed from here on.
Result<whatif::PreparedTrace> ReadAndPrepare(const std::string& path,
                                             const trace::JobMeta& meta) {
  ASSIGN_OR_RETURN(trace::OpsTable table, ingest::ReadOpsCsvFile(path));
  auto prepared = whatif::PrepareTrace(table, meta);
  if (!prepared.ok()) return prepared.status().WithContext(path);
  return prepared;
}

}  // namespace

Status RunAnalyze(const std::vector<std::string>& args) {
  const FlagSpec spec{
      .with_value = {"meta", "json", "fix", "unfix", "dp", "pp", "tp", "cp",
                     "rank-map",
                     "vpp", "pool", "top", "threads", "usd-per-gpu-hour",
                     "gpus", "days", "hours", "perfetto", "perfetto-steps",
                     "html"},
      .booleans = {"quiet"},
  };
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  const std::vector<std::string>& inputs = flags.positional();
  const bool kineto = !inputs.empty() &&
                      std::all_of(inputs.begin(), inputs.end(), IsKinetoInput);
  if (inputs.empty() || (inputs.size() > 1 && !kineto)) {
    return InvalidInput(
        "analyze needs one ops CSV, or Kineto traces (files or a folder)\n" +
        std::string(kAnalyzeUsage));
  }
  const std::string trace_path = inputs[0];
  ASSIGN_OR_RETURN(whatif::WhatIfOptions options, ParseOptions(flags, kineto));
  ASSIGN_OR_RETURN(std::optional<int64_t> top, flags.GetInt("top"));

  trace::JobMeta meta;
  const std::string meta_path =
      flags.Get("meta").value_or(kineto ? "" : FindMeta(trace_path));
  if (!meta_path.empty()) {
    ASSIGN_OR_RETURN(std::string text, ingest::ReadFile(meta_path));
    ASSIGN_OR_RETURN(meta, ingest::ParseJobMetaYaml(text, meta_path));
  }
  // Flags given for a Kineto job lay its ranks out (else it is inferred).
  const bool layout_flags = flags.Has("dp") || flags.Has("pp");
  RETURN_IF_ERROR(ApplyLayoutFlags(flags, &meta));

  whatif::PreparedTrace prepared;
  std::optional<report::InputNotes> notes;
  std::string coverage;  // why no diagnosis is made, if so
  if (kineto) {
    const graph::LayoutFlags layout{
        .dp = layout_flags || !meta_path.empty() ? meta.dp : 0,
        .pp = layout_flags || !meta_path.empty() ? meta.pp : 0,
        .tp = meta.tp,
        .cp = meta.cp,
        .gpus_per_node = GpusPerNode(meta)};
    ASSIGN_OR_RETURN(
        KinetoJob job,
        ReadKinetoJob(inputs,
                      options.threads ? options.threads : HardwareThreads(),
                      layout, flags.Get("rank-map").value_or("")));
    coverage = CoverageProblem(job);
    if (!coverage.empty()) {
      job.notes.warnings.push_back(
          "no diagnosis: " + coverage +
          "; the numbers describe the traced ranks only");
    }
    prepared = std::move(job.prepared);
    notes = std::move(job.notes);
    for (const std::string& w : notes->warnings) {
      std::fprintf(stderr, "strag: warning: %s\n", w.c_str());
    }
    if (meta.world_size == 0) meta.world_size = notes->world_size;
  } else {
    ASSIGN_OR_RETURN(prepared, ReadAndPrepare(trace_path, meta));
  }
  if (!kineto && meta.dp > 0 && meta.dp != prepared.dp) {
    std::fprintf(stderr,
                 "strag: warning: metadata says dp %d but the trace has %d DP "
                 "ranks; using the trace\n",
                 meta.dp, prepared.dp);
  }
  ASSIGN_OR_RETURN(whatif::WhatIfResult result,
                   whatif::Analyze(prepared, options));

  // Without enough of the job, costs cover the traced ranks only.
  trace::JobMeta cost_meta = meta;
  if (!coverage.empty()) {
    cost_meta.world_size = static_cast<int64_t>(prepared.workers.size());
  }
  ASSIGN_OR_RETURN(const econ::StepCost cost,
                   CostFromFlags(flags, result, cost_meta));
  diagnose::Diagnosis diagnosis = diagnose::Diagnose(
      prepared, result, {.gpus_per_node = GpusPerNode(meta), .tp = meta.tp});
  if (!coverage.empty()) diagnose::WithoutDiagnosis(coverage, &diagnosis);
  ASSIGN_OR_RETURN(const std::optional<whatif::Timeline> slowest,
                   SlowestStepTimeline(prepared, result));
  if (slowest) diagnose::AddWorstStep(*slowest, &diagnosis);
  if (auto json = flags.Get("json")) {
    RETURN_IF_ERROR(WriteTextFile(
        *json, report::RenderAnalysisJson(result, meta, cost, &diagnosis,
                                          notes ? &*notes : nullptr)));
  }
  if (auto html = flags.Get("html")) {
    RETURN_IF_ERROR(WriteHtmlReport(*html, trace_path, result, meta, diagnosis,
                                    cost, slowest ? &*slowest : nullptr,
                                    notes ? &*notes : nullptr));
  }
  if (auto perfetto = flags.Get("perfetto")) {
    ASSIGN_OR_RETURN(
        std::vector<size_t> steps,
        ChooseSteps(prepared, result, flags.Get("perfetto-steps")));
    ASSIGN_OR_RETURN(std::vector<whatif::Timeline> timelines,
                     BuildTimelines(prepared, result, steps));
    RETURN_IF_ERROR(WriteTextFile(
        *perfetto, report::RenderPerfettoJson(timelines, trace_path)));
  }
  if (!flags.Has("quiet")) {
    report::SummaryOptions summary{.source = trace_path,
                                   .top = static_cast<int>(top.value_or(5)),
                                   .cost = cost,
                                   .diagnosis = &diagnosis,
                                   .color = UseColor(),
                                   .input = notes ? &*notes : nullptr};
    std::fputs(report::RenderTerminalSummary(result, meta, summary).c_str(),
               stdout);
  }
  return Status::Ok();
}

}  // namespace strag::cli
