// SPDX-License-Identifier: Apache-2.0
#include "cli/analyze_command.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>

#include "base/str_format.h"
#include "cli/flags.h"
#include "cli/kineto_input.h"
#include "cli/limit_flags.h"
#include "cli/output_file.h"
#include "cli/process_group.h"
#include "cli/report_flags.h"
#include "cli/simulate_limits.h"
#include "ingest/kineto/kineto_file.h"
#include "load/distributed_ops_csv.h"
#include "load/job_files.h"
#include "load/kineto_job.h"
#include "load/ops_csv_size.h"
#include "load/streamed_ops_csv.h"
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
    "                        the traces name none (default: file-name order)\n"
    "  --hosts FILE          the host of each rank, `RANK HOST` per line: nodes\n"
    "                        by host (default: host names in tensorboard trace\n"
    "                        file names, else rank / gpus_per_node, assumed)\n"
    "  --window-ops N        ops CSV: read and analyse it in windows of whole\n"
    "                        steps of at least N ops (K, M, G suffixes; 1M is\n"
    "                        a good size), held one at a time, for traces too\n"
    "                        large for memory; rows out of step order are\n"
    "                        sorted on disk. The same report, but no plan.\n"
    "                        Under mpirun each process reads a share and\n"
    "                        holds only its steps (in memory)\n"
    "  --spill-dir DIR       where --window-ops keeps its windows (16 bytes\n"
    "                        per op; default /tmp)\n"
    "  --memory-budget N     what the analysis may hold (K, M, G suffixes;\n"
    "                        default half the physical memory or ulimit -v):\n"
    "                        an ops CSV estimated larger in memory is\n"
    "                        analysed in windows of 1M ops, as --window-ops\n";

namespace {

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

// The window of the analysis in windows that the memory budget chooses.
constexpr uint64_t kBudgetWindowOps = uint64_t{1} << 20;

// --memory-budget, else half this machine's memory.
Result<MemoryBudget> ParseMemoryBudget(const Flags& flags) {
  MemoryBudget budget = ThisMachinesBudget();
  if (const std::optional<std::string> text = flags.Get("memory-budget")) {
    const std::optional<uint64_t> bytes = ParseBytes(*text);
    if (!bytes || *bytes == 0 || *bytes > (uint64_t{1} << 50)) {
      return InvalidInput(
          "flag --memory-budget: expected a size in bytes (K, M, G "
          "suffixes), got \"" + *text + "\"");
    }
    budget.bytes = static_cast<int64_t>(*bytes);
    budget.what = "--memory-budget";
  }
  return budget;
}

// The ops CSV's size, sampled from its first MiB of text once for both
// choices below; nullopt for a file that cannot hold `rows_that_matter`
// rows (not sampled) or that cannot be read (reported when it is read).
std::optional<load::OpsCsvSize> SampledSize(const std::string& trace,
                                            uint64_t rows_that_matter) {
  std::error_code ec;
  const uintmax_t file_bytes = std::filesystem::file_size(trace, ec);
  if (ec || load::MaxOpsCsvRows(file_bytes) < rows_that_matter) {
    return std::nullopt;
  }
  Result<load::OpsCsvSize> size = load::EstimateOpsCsvSize(trace);
  if (!size.ok()) return std::nullopt;
  return *size;
}

// Whether an ops CSV of `size` is too large to analyse in memory: its
// estimated rows at load::kInMemoryBytesPerOp over the budget. Returns why
// ("" when it fits or was not sampled: a file that cannot hold a
// thousandth of the budget in rows, since an op never costs 1,000 bytes,
// 100 plus 40 per extra column).
std::string OverMemoryBudget(const MemoryBudget& budget,
                             const std::optional<load::OpsCsvSize>& size) {
  if (!size) return std::string();
  const auto need = static_cast<int64_t>(size->InMemoryBytes());
  if (need <= budget.bytes) return std::string();
  return StrFormat("%s%.3g ops need about %s in memory, more than %s (%s)",
                   size->whole ? "" : "about ",
                   static_cast<double>(size->rows), MemoryText(need).c_str(),
                   MemoryText(budget.bytes).c_str(),
                   budget.what == "--memory-budget"
                       ? "--memory-budget"
                       : ("half of the " + MemoryText(budget.of) + " " +
                          budget.what)
                             .c_str());
}

// --window-ops, or a trace over the memory budget (`over_budget` says
// why), or a large trace under mpirun (`shared_window_ops`, no flag): an
// ops CSV read and analysed a window of steps at a time.
Status RunInWindows(const Flags& flags, const load::JobRead& read,
                    const report::ReportOptions& options, OutputFiles* out,
                    ReportView view, const std::string& over_budget,
                    uint64_t shared_window_ops = 0) {
  if (load::IsKinetoJob(read.inputs)) {
    return InvalidInput("flag --window-ops: only for an ops CSV");
  }
  if (view == ReportView::kPlan) {
    return InvalidInput(
        over_budget.empty()
            ? "flag --window-ops: the plan needs the whole trace in memory"
            : read.inputs[0] + ": " + over_budget +
                  ", and the plan needs the whole trace in memory "
                  "(--memory-budget to allow more)");
  }
  uint64_t window_ops = kBudgetWindowOps;
  if (shared_window_ops != 0) {
    window_ops = shared_window_ops;
  } else if (over_budget.empty()) {
    const std::string text = flags.Get("window-ops").value_or("");
    const std::optional<uint64_t> window = ParseBytes(text);
    if (!window || *window == 0 || *window > (uint64_t{1} << 32)) {
      return InvalidInput(
          "flag --window-ops: expected a count of ops from 1 to 4G (K, M, G "
          "suffixes), got \"" + text + "\"");
    }
    window_ops = *window;
  } else if (!flags.Has("quiet") && IsLeadProcess()) {
    std::fprintf(stderr,
                 "strag: %s: %s: analysing it in windows of steps "
                 "(--window-ops 1M), with the same results\n",
                 Printable(read.inputs[0]).c_str(), over_budget.c_str());
  }
  load::StreamOptions stream{.window_ops = static_cast<size_t>(window_ops),
                             .spill_dir = flags.Get("spill-dir").value_or("/tmp"),
                             .threads = read.threads,
                             .limits = read.limits};
  const std::string for_a_plan =
      over_budget.empty() ? "run without --window-ops for a plan"
                          : "the trace is over the memory budget: "
                            "--memory-budget to allow more, for a plan";
  // Under mpirun each process reads a share and holds its steps
  // (load/distributed_ops_csv.h); where one cannot vouch for its share,
  // each reads the file alone and analyses the whole job alone.
  report::ReportOptions alone = options;
  if (Collective* c = ProcessCollective(); c != nullptr && c->size() > 1) {
    ASSIGN_OR_RETURN(
        std::optional<load::DistributedJob> job,
        load::DistributeOpsCsv(read.inputs[0], read.meta, stream, c));
    if (job) {
      if (!flags.Has("quiet") && IsLeadProcess()) {
        std::fprintf(stderr,
                     "strag: %llu ops over %zu processes, each holding its "
                     "steps (read by %s; this one: %llu ops in %zu windows, "
                     "%.1f MB of rows sent to the others)\n",
                     static_cast<unsigned long long>(job->ops), c->size(),
                     job->read_by.c_str(),
                     static_cast<unsigned long long>(job->my_ops),
                     job->windows->size(),
                     static_cast<double>(job->exchanged_bytes) / 1e6);
      }
      report::ReportInput in{.source = read.inputs[0],
                             .prepared = job->shape,
                             .meta = read.meta};
      RETURN_IF_ERROR(load::ApplyHostsFile(read.hosts_file, &in));
      ASSIGN_OR_RETURN(
          const report::Report report,
          report::BuildWindowedReport(std::move(in), job->windows.get(),
                                      options, for_a_plan));
      if (!IsLeadProcess()) return Status::Ok();
      return WriteReport(flags, report, out, view);
    }
    alone.whatif.collective = nullptr;
  }
  ASSIGN_OR_RETURN(load::StreamedJob job,
                   load::StreamOpsCsv(read.inputs[0], read.meta, stream));
  if (!flags.Has("quiet") && IsLeadProcess()) {
    std::fprintf(
        stderr,
        "strag: %llu ops in %zu windows of steps (%.1f MB spilled)%s\n",
        static_cast<unsigned long long>(job.ops), job.num_windows,
        static_cast<double>(job.spill_bytes) / 1e6,
        job.sorted ? StrFormat("; rows not grouped by step: read twice, "
                               "sorted through %.1f MB",
                               static_cast<double>(job.sort_bytes) / 1e6)
                         .c_str()
                   : "");
  }
  report::ReportInput in{
      .source = read.inputs[0], .prepared = job.shape, .meta = read.meta};
  RETURN_IF_ERROR(load::ApplyHostsFile(read.hosts_file, &in));
  ASSIGN_OR_RETURN(const report::Report report,
                   report::BuildWindowedReport(std::move(in), job.windows.get(),
                                               alone, for_a_plan));
  if (!IsLeadProcess()) return Status::Ok();
  return WriteReport(flags, report, out, view);
}

// From this many ops (estimated), an ops CSV analysed in memory may first
// be read in windows of steps held in memory (load::StreamOptions::hold;
// under mpirun, each process its share of the steps): alone, where that
// takes less memory than its table (load::OpsCsvSize::HeldWindowsTakeLess).
constexpr uint64_t kHeldWindowsFromOps = uint64_t{4} << 20;
// Their windows: llama-16k (7.8M ops) held in windows of 1M ops took
// 3.0-4.1 s in 356 MB, of 512K 4.7-5.4 s in 303 MB.
constexpr size_t kHeldWindowOps = size_t{1} << 20;

// A large ops CSV whose rows come step by step (what `strag simulate`
// writes, and traces written step by step), analysed in windows held in
// memory: the in-memory report, byte for byte (report::BuildWindowedReport),
// for less memory. False when the file is smaller, or its rows come in
// another order (found in its first rows): the caller reads it whole.
Result<bool> RunInHeldWindows(const Flags& flags, const load::JobRead& read,
                              const report::ReportOptions& options,
                              OutputFiles* out, const std::string& trace) {
  load::StreamOptions stream{.window_ops = kHeldWindowOps,
                             .threads = read.threads,
                             .limits = read.limits,
                             .hold = true,
                             .sort = false};
  ASSIGN_OR_RETURN(load::StreamedJob job,
                   load::StreamOpsCsv(trace, read.meta, stream));
  if (job.windows == nullptr) return false;  // not step by step
  report::ReportInput in{
      .source = trace, .prepared = std::move(job.shape), .meta = read.meta};
  RETURN_IF_ERROR(load::ApplyHostsFile(read.hosts_file, &in));
  ASSIGN_OR_RETURN(
      const report::Report report,
      report::BuildWindowedReport(std::move(in), job.windows.get(), options));
  RETURN_IF_ERROR(WriteReport(flags, report, out, ReportView::kAnalysis));
  return true;
}

Status Run(const std::vector<std::string>& args, ReportView view) {
  FlagSpec spec{
      .with_value = {"meta", "dp", "pp", "tp", "cp", "vpp", "rank-map",
                     "hosts", "window-ops", "spill-dir", "memory-budget"},
      .booleans = {},
  };
  AddReportFlags(&spec);
  AddLimitFlags(&spec);
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  const std::vector<std::string>& inputs = flags.positional();
  const bool kineto = load::IsKinetoJob(inputs);
  if (inputs.empty() || (inputs.size() > 1 && !kineto)) {
    return InvalidInput(
        std::string(view == ReportView::kPlan ? "plan" : "analyze") +
        " needs one ops CSV, or Kineto traces (files or a folder)\n" +
        (view == ReportView::kPlan ? PlanUsage() : AnalyzeUsage()));
  }
  const std::string trace_path = inputs[0];
  ASSIGN_OR_RETURN(
      report::ReportOptions options,
      ParseReportOptions(flags, kineto, view == ReportView::kPlan));
  // Under mpirun, the processes share the replays (whatif/analysis.h).
  options.whatif.collective = ProcessCollective();
  ASSIGN_OR_RETURN(const ingest::InputLimits limits, ParseLimitFlags(flags));

  const std::string meta_path =
      flags.Get("meta").value_or(kineto ? "" : load::FindMeta(trace_path));
  // The outputs checked before any work, against the inputs too.
  OutputFiles out;
  size_t input_files = 0;
  for (const std::string& input : inputs) {
    Result<std::vector<std::string>> files =
        kineto ? ingest::ListKinetoInputs(input)
               : Result<std::vector<std::string>>({input});
    if (!files.ok()) continue;  // reported when read
    for (const std::string& file : *files) out.AddInput(file);
    input_files += files->size();
  }
  out.AddInput(meta_path);
  out.AddInput(flags.Get("hosts").value_or(""));
  RETURN_IF_ERROR(DeclareReportOutputs(flags, &out));
  ASSIGN_OR_RETURN(trace::JobMeta meta, load::ReadMeta(meta_path));
  // Flags given for a Kineto job lay its ranks out (else it is inferred).
  const bool layout_flags = flags.Has("dp") || flags.Has("pp");
  RETURN_IF_ERROR(ApplyLayoutFlags(flags, &meta));
  load::JobRead read{.inputs = inputs,
                     .meta = std::move(meta),
                     .layout_given = layout_flags || !meta_path.empty(),
                     .hosts_file = flags.Get("hosts").value_or(""),
                     .limits = limits,
                     .threads = options.whatif.threads,
                     .collective = ProcessCollective()};
  if (kineto) {
    ASSIGN_OR_RETURN(read.rank_map,
                     ParseRankMap(flags.Get("rank-map").value_or("")));
  }
  ASSIGN_OR_RETURN(const MemoryBudget budget, ParseMemoryBudget(flags));
  if (flags.Has("window-ops")) {
    return RunInWindows(flags, read, options, &out, view, "");
  }
  // An ops CSV too large to hold is analysed in windows (under mpirun,
  // each process holding its share of the steps).
  const std::optional<load::OpsCsvSize> size =
      kineto ? std::nullopt
             : SampledSize(trace_path,
                           std::min<uint64_t>(
                               static_cast<uint64_t>(budget.bytes) / 1000 + 1,
                               kHeldWindowsFromOps));
  if (const std::string over = OverMemoryBudget(budget, size); !over.empty()) {
    return RunInWindows(flags, read, options, &out, view, over);
  }
  // A large ops CSV: under mpirun each process reads a share and holds its
  // steps (whatever the order of the rows); alone, when its rows come step
  // by step and that takes less memory (OpsCsvSize::HeldWindowsTakeLess),
  // its windows
  // are held in memory (16 bytes per op) instead of its table. The same
  // report either way.
  if (!kineto && view == ReportView::kAnalysis && !options.plan && size &&
      size->rows >= kHeldWindowsFromOps) {
    if (ProcessCollective() != nullptr && ProcessCollective()->size() > 1) {
      return RunInWindows(flags, read, options, &out, view, "", kHeldWindowOps);
    }
    if (size->HeldWindowsTakeLess()) {
      ASSIGN_OR_RETURN(const bool done, RunInHeldWindows(flags, read, options,
                                                         &out, trace_path));
      if (done) return Status::Ok();
    }
  }
  ASSIGN_OR_RETURN(report::ReportInput in, load::ReadJob(std::move(read)));
  if (kineto && load::ReadsKinetoByShares(input_files, ProcessCollective()) &&
      !flags.Has("quiet") && IsLeadProcess()) {
    std::fprintf(stderr,
                 "strag: %zu profiler traces over %zu processes, each "
                 "reading its share\n",
                 input_files, ProcessCollective()->size());
  }
  if (kineto && IsLeadProcess()) {
    for (const std::string& w : in.notes->warnings) {
      std::fprintf(stderr, "strag: warning: %s\n", Printable(w).c_str());
    }
  }
  ASSIGN_OR_RETURN(const report::Report report,
                   report::BuildReport(std::move(in), options));
  if (!IsLeadProcess()) return Status::Ok();  // the lead one writes
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
