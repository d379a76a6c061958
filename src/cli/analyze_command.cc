// SPDX-License-Identifier: Apache-2.0
#include "cli/analyze_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "base/str_format.h"
#include "base/parallel_for.h"
#include "cli/flags.h"
#include "cli/kineto_input.h"
#include "cli/limit_flags.h"
#include "cli/output_file.h"
#include "cli/report_flags.h"
#include "ingest/common/file.h"
#include "ingest/kineto/kineto_file.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "report/inputs.h"
#include "report/report.h"

namespace strag::cli {

const char kAnalyzeUsageHead[] =
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
    "                        the traces name none (default: file-name order)\n";

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
    ASSIGN_OR_RETURN(std::optional<int64_t> v,
                     flags.GetInt(name, 1, int64_t{1} << 24));
    if (!v) continue;
    *field = static_cast<int32_t>(*v);
  }
  return Status::Ok();
}

}  // namespace

std::string AnalyzeUsage() {
  return std::string(kAnalyzeUsageHead) + kLimitFlagsUsage + kReportFlagsUsage;
}

namespace {

Status Run(const std::vector<std::string>& args, ReportView view) {
  FlagSpec spec{
      .with_value = {"meta", "dp", "pp", "tp", "cp", "vpp", "rank-map"},
      .booleans = {},
  };
  AddReportFlags(&spec);
  AddLimitFlags(&spec);
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  const std::vector<std::string>& inputs = flags.positional();
  const bool kineto = !inputs.empty() &&
                      std::all_of(inputs.begin(), inputs.end(), IsKinetoInput);
  if (inputs.empty() || (inputs.size() > 1 && !kineto)) {
    return InvalidInput(
        std::string(view == ReportView::kPlan ? "plan" : "analyze") +
        " needs one ops CSV, or Kineto traces (files or a folder)\n" +
        (view == ReportView::kPlan ? PlanUsage() : AnalyzeUsage()));
  }
  const std::string trace_path = inputs[0];
  ASSIGN_OR_RETURN(
      const report::ReportOptions options,
      ParseReportOptions(flags, kineto, view == ReportView::kPlan));
  ASSIGN_OR_RETURN(const ingest::InputLimits limits, ParseLimitFlags(flags));

  trace::JobMeta meta;
  const std::string meta_path =
      flags.Get("meta").value_or(kineto ? "" : FindMeta(trace_path));
  // The outputs checked before any work, against the inputs too.
  OutputFiles out;
  for (const std::string& input : inputs) {
    Result<std::vector<std::string>> files =
        kineto ? ingest::ListKinetoInputs(input)
               : Result<std::vector<std::string>>({input});
    if (!files.ok()) continue;  // reported when read
    for (const std::string& file : *files) out.AddInput(file);
  }
  out.AddInput(meta_path);
  RETURN_IF_ERROR(DeclareReportOutputs(flags, &out));
  if (!meta_path.empty()) {
    ASSIGN_OR_RETURN(std::string text,
                     ingest::ReadFile(meta_path, kMaxMetaFileBytes));
    ASSIGN_OR_RETURN(meta, ingest::ParseJobMetaYaml(text, meta_path));
  }
  // Flags given for a Kineto job lay its ranks out (else it is inferred).
  const bool layout_flags = flags.Has("dp") || flags.Has("pp");
  RETURN_IF_ERROR(ApplyLayoutFlags(flags, &meta));
  report::ReportInput in;
  if (kineto) {
    using RankMap = std::map<std::string, int32_t>;
    ASSIGN_OR_RETURN(RankMap rank_map,
                     ParseRankMap(flags.Get("rank-map").value_or("")));
    const bool given = layout_flags || !meta_path.empty();
    report::ProfilerInputOptions read{
        .source = trace_path,
        .meta = meta,
        .layout = {.dp = given ? meta.dp : 0,
                   .pp = given ? meta.pp : 0,
                   .tp = meta.tp,
                   .cp = meta.cp,
                   .gpus_per_node = report::GpusPerNode(meta)},
        .rank_map = std::move(rank_map)};
    ASSIGN_OR_RETURN(
        in, ReadKinetoJob(inputs,
                          options.whatif.threads ? options.whatif.threads
                                                 : HardwareThreads(),
                          std::move(read), limits));
    for (const std::string& w : in.notes->warnings) {
      std::fprintf(stderr, "strag: warning: %s\n", Printable(w).c_str());
    }
  } else {
    // The table is released before the analysis: only the prepared arrays
    // are needed from here on.
    ASSIGN_OR_RETURN(trace::OpsTable table,
                     ingest::ReadOpsCsvFile(trace_path, {.limits = limits}));
    ASSIGN_OR_RETURN(in, report::OpsTableInput(table, meta, trace_path));
  }
  ASSIGN_OR_RETURN(const report::Report report,
                   report::BuildReport(std::move(in), options));
  return WriteReport(flags, report, &out, view);
}

}  // namespace

Status RunAnalyze(const std::vector<std::string>& args) {
  return Run(args, ReportView::kAnalysis);
}

Status RunPlan(const std::vector<std::string>& args) {
  return Run(args, ReportView::kPlan);
}

std::string PlanUsage() {
  std::string usage = AnalyzeUsage();
  usage.replace(0, usage.find('\n'),
                "usage: strag plan TRACE [options]   (every mitigation priced "
                "by replay and ranked: docs/plan.md)");
  const std::string second = "       strag analyze ";
  const size_t at = usage.find(second);
  if (at != std::string::npos) usage.replace(at, second.size(), "       strag plan ");
  return usage;
}

}  // namespace strag::cli
