// SPDX-License-Identifier: Apache-2.0
#include "cli/simulate_command.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string_view>
#include <vector>

#include "base/f32.h"
#include "base/parallel_for.h"
#include "cli/flags.h"
#include "cli/limit_flags.h"
#include "cli/output_file.h"
#include "cli/report_flags.h"
#include "cli/simulate_csv.h"
#include "cli/simulate_limits.h"
#include "ingest/common/file.h"
#include "ingest/common/gzip.h"
#include "ingest/kineto/kineto_writer.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "ingest/ops_csv/ops_csv_writer.h"
#include "report/inputs.h"
#include "report/report.h"
#include "sim/clock_offsets.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "sim/truth_json.h"

namespace strag::cli {

namespace {
LiveSimulation g_live_simulation = nullptr;  // set by strag-serve
}  // namespace

void SetLiveSimulation(LiveSimulation play) { g_live_simulation = play; }

const char kSimulateUsageHead[] =
    "usage: strag simulate SPEC.yaml | --preset NAME [options]\n"
    "  SPEC.yaml             job spec, see docs/formats/sim-spec.md\n"
    "  --preset NAME         a built-in spec (--list-presets shows them)\n"
    "  --live URL            play the job to `strag serve` at URL as the\n"
    "                        agents of every rank would (load generator):\n"
    "                        --rate STEPS_PER_S (default 1; 0: no pause),\n"
    "                        --job NAME (sim), --token-file FILE,\n"
    "                        --records-per-request N (1000)\n"
    "  --out DIR             write DIR/ops.csv.gz, DIR/meta.yaml, "
    "DIR/truth.json;\n"
    "                        ops.csv.gz is streamed while the job is\n"
    "                        simulated (bounded memory, a multi-member\n"
    "                        gzip compressed on every core)\n"
    "  --format F            what --out writes besides meta.yaml and "
    "truth.json:\n"
    "                        csv (default: ops.csv.gz), kineto (one PyTorch\n"
    "                        profiler trace per rank, DIR/kineto/rank-R.pt.\n"
    "                        trace.json, and DIR/clock-offsets.json;\n"
    "                        docs/formats/kineto-export.md) or csv,kineto\n"
    "  --clock-offset-ms X   kineto: shift each rank's clock by up to +-X ms\n"
    "                        (default 0; drawn from the seed)\n"
    "  --nccl-names new|old  kineto: NCCL kernel names of NCCL >= 2.19 (new,\n"
    "                        default) or before\n"
    "  --kernels-per-op N    kineto: kernels per compute op (default 1)\n"
    "  --gzip                kineto: write rank-R.pt.trace.json.gz\n"
    "  --truncate-rank-lists kineto: list at most 30 ranks in the collective\n"
    "                        args, as PyTorch does (pg_config stays full)\n"
    "  --steps-window A:B    write only steps A..B (inclusive); with --out,\n"
    "                        --analyze analyses what was written\n"
    "  --window-steps N      with --out: steps simulated and written at a\n"
    "                        time (default: what fits a quarter of the memory\n"
    "                        budget, at most 256 MB of per-op arrays)\n"
    "  --seed N              override job.seed (0 .. 2^64 - 1)\n"
    "  --max-ops N           refuse jobs of more than N simulated ops\n"
    "                        (default: refuse those whose estimated memory\n"
    "                        exceeds half of the physical memory or of\n"
    "                        ulimit -v; docs/formats/sim-spec.md, Limits)\n"
    "  --no-truth            skip the ground-truth replays\n"
    "  --list-presets        print the names of the built-in specs\n"
    "  --analyze             analyse the simulated trace as `strag analyze`\n"
    "                        does (the same options and outputs):\n";

std::string SimulateUsage() {
  return std::string(kSimulateUsageHead) + kReportFlagsUsage;
}

namespace {

namespace fs = std::filesystem;

Result<sim::JobSpec> LoadSpec(const Flags& flags) {
  if (auto preset = flags.Get("preset")) {
    if (!flags.positional().empty()) {
      return InvalidInput("simulate takes a SPEC file or --preset " + *preset +
                          ", not both (got " + flags.positional()[0] + ")");
    }
    return sim::PresetSpec(*preset);
  }
  if (flags.positional().size() != 1) {
    return InvalidInput("simulate needs one SPEC file or --preset NAME\n" +
                        SimulateUsage());
  }
  const std::string path = flags.positional()[0];
  // A spec or a length file is small text: /dev/zero must not be held.
  ASSIGN_OR_RETURN(std::string text, ingest::ReadFile(path, kMaxMetaFileBytes));
  ASSIGN_OR_RETURN(sim::JobSpec spec, sim::ParseJobSpec(text, path));
  spec.name = fs::path(path).stem().string();
  if (spec.sequences.kind == sim::SequenceSection::Kind::kFile) {
    const fs::path lengths = fs::path(path).parent_path() / spec.sequences.path;
    ASSIGN_OR_RETURN(std::string body,
                     ingest::ReadFile(lengths.string(), kMaxMetaFileBytes));
    size_t line = 0, pos = 0;
    while (pos < body.size()) {
      size_t end = body.find('\n', pos);
      if (end == std::string::npos) end = body.size();
      std::string_view field(body.data() + pos, end - pos);
      ++line;
      pos = end + 1;
      if (field.empty()) continue;
      int64_t value = 0;
      const auto [ptr, ec] =
          std::from_chars(field.data(), field.data() + field.size(), value);
      if (ec != std::errc() || ptr != field.data() + field.size() ||
          value < 1) {
        return InvalidInput(lengths.string() + ": line " +
                            std::to_string(line) + ": \"" + std::string(field) +
                            "\" is not a positive sequence length");
      }
      spec.sequences.lengths.push_back(value);
    }
    if (spec.sequences.lengths.empty()) {
      return InvalidInput(lengths.string() +
                          ": no sequence lengths (expected one positive "
                          "integer per line)");
    }
  }
  return spec;
}

// "A:B", steps A..B of a job of `steps` steps.
Result<std::pair<int64_t, int64_t>> ParseWindow(const std::string& text,
                                                int64_t steps) {
  const size_t colon = text.find(':');
  int64_t a = 0, b = 0;
  auto parse = [](std::string_view s, int64_t* out) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && ptr == s.data() + s.size();
  };
  if (colon == std::string::npos ||
      !parse(std::string_view(text).substr(0, colon), &a) ||
      !parse(std::string_view(text).substr(colon + 1), &b) || a < 0 || b < a) {
    return InvalidInput(
        "flag --steps-window: expected A:B with 0 <= A <= B, "
        "got \"" +
        text + "\"");
  }
  if (b >= steps) {
    return InvalidInput("flag --steps-window: " + text +
                        " is outside the job's steps 0.." +
                        std::to_string(steps - 1) + " (job.steps " +
                        std::to_string(steps) + ")");
  }
  return std::pair{a, b};
}

// What --out writes, from --format and the kineto flags.
struct OutputFormats {
  bool csv = true;
  bool kineto = false;
  bool gzip = false;
  ingest::KinetoExportOptions kineto_options;
};

Result<OutputFormats> ParseFormats(const Flags& flags,
                                   const sim::JobSpec& spec) {
  OutputFormats out;
  if (auto text = flags.Get("format")) {
    out.csv = false;
    std::string_view rest = *text;
    while (!rest.empty()) {
      const size_t comma = std::min(rest.find(','), rest.size());
      const std::string_view name = rest.substr(0, comma);
      if (name == "csv") {
        out.csv = true;
      } else if (name == "kineto") {
        out.kineto = true;
      } else {
        return InvalidInput("flag --format: unknown format \"" +
                            std::string(name) +
                            "\" (expected csv, kineto or csv,kineto)");
      }
      rest.remove_prefix(std::min(comma + 1, rest.size()));
    }
    if (!out.csv && !out.kineto) {
      return InvalidInput("flag --format: expected csv, kineto or csv,kineto");
    }
  }
  for (const char* flag : {"clock-offset-ms", "nccl-names", "kernels-per-op",
                           "gzip", "truncate-rank-lists"}) {
    if (flags.Has(flag) && !out.kineto) {
      return InvalidInput(std::string("flag --") + flag +
                          " needs --format kineto");
    }
  }
  ingest::KinetoExportOptions& o = out.kineto_options;
  o.seed = spec.job.seed;
  o.gpus_per_node = spec.job.gpus_per_node;
  ASSIGN_OR_RETURN(std::optional<double> offset,
                   flags.GetDouble("clock-offset-ms"));
  if (offset && !(*offset >= 0.0 && *offset <= 1e6)) {
    return InvalidInput("flag --clock-offset-ms: expected 0 .. 1e6 ms");
  }
  o.max_clock_offset_ms = offset.value_or(0.0);
  if (auto names = flags.Get("nccl-names")) {
    if (*names != "new" && *names != "old") {
      return InvalidInput("flag --nccl-names: expected new or old, got \"" +
                          *names + "\"");
    }
    o.nccl_names = *names == "new" ? ingest::NcclKernelNames::kNew
                                   : ingest::NcclKernelNames::kOld;
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> kernels,
                   flags.GetInt("kernels-per-op"));
  if (kernels && (*kernels < 1 || *kernels > 1000)) {
    return InvalidInput("flag --kernels-per-op: expected 1 .. 1000");
  }
  o.kernels_per_compute = static_cast<int32_t>(kernels.value_or(1));
  o.truncate_rank_lists = flags.Has("truncate-rank-lists");
  out.gzip = flags.Has("gzip");
  return out;
}

// DIR/kineto/rank-R.pt.trace.json[.gz], one rank at a time (memory: the
// table plus one file), and DIR/clock-offsets.json with the ground truth,
// into `out` (renamed into place when every output is complete). The line
// that says so goes to `log`.
Status WriteKinetoTraces(const trace::OpsTable& table,
                         const trace::JobMeta& meta,
                         const OutputFormats& formats, const fs::path& dir,
                         OutputFiles* out, FILE* log) {
  // The clock offsets are ground truth: drawn by the simulator, one per
  // traced worker (dp x stage).
  ingest::KinetoExportOptions options = formats.kineto_options;
  options.clock_offset_ns = sim::DrawClockOffsets(
      options.seed, static_cast<size_t>(meta.dp) * static_cast<size_t>(meta.pp),
      options.max_clock_offset_ms);
  ASSIGN_OR_RETURN(const ingest::KinetoExport exported,
                   ingest::KinetoExport::Build(table, meta, options));
  RETURN_IF_ERROR(out->CreateDirectories(dir.string()));
  const std::string suffix = formats.gzip ? ".gz" : "";
  std::vector<ingest::KinetoRankStats> stats;
  int64_t bytes = 0;
  std::string text;
  for (const ingest::KinetoWorker& w : exported.workers()) {
    text.clear();
    stats.push_back(exported.Render(w.rank, &text));
    if (formats.gzip) {
      ASSIGN_OR_RETURN(text, ingest::GzipCompress(text));
    }
    bytes += static_cast<int64_t>(text.size());
    const std::string name =
        "rank-" + std::to_string(w.rank) + ".pt.trace.json" + suffix;
    RETURN_IF_ERROR(out->Write((dir / name).string(), text));
  }
  // Next to the folder, not in it: `strag analyze DIR/kineto` reads every
  // JSON file of the folder as a trace.
  const fs::path manifest = dir.parent_path() / "clock-offsets.json";
  RETURN_IF_ERROR(out->Write(manifest.string(), ingest::RenderKinetoManifest(
                                                    exported, stats, suffix)));
  std::fprintf(log, "  wrote %zu Kineto traces (%.1f MB) to %s and %s\n",
               exported.workers().size(), static_cast<double>(bytes) / 1e6,
               dir.string().c_str(), manifest.string().c_str());
  return Status::Ok();
}

// The files of --out DIR but a streamed ops.csv.gz, into `out`: committed
// by the caller. `table` is the job's (empty when the CSV was streamed).
Status WriteOutputs(const sim::SimulatedJob& job, const trace::OpsTable& table,
                    const std::string& dir, const OutputFormats& formats,
                    OutputFiles* out, FILE* log) {
  RETURN_IF_ERROR(out->CreateDirectories(dir));
  if (formats.csv && formats.kineto) {
    RETURN_IF_ERROR(
        WriteOpsCsvGzip(table, (fs::path(dir) / "ops.csv.gz").string(), out));
  }
  if (formats.kineto) {
    RETURN_IF_ERROR(WriteKinetoTraces(table, sim::MetaOf(job), formats,
                                      fs::path(dir) / "kineto", out, log));
  }
  RETURN_IF_ERROR(out->Write((fs::path(dir) / "meta.yaml").string(),
                             ingest::WriteJobMetaYaml(sim::MetaOf(job))));
  return out->Write((fs::path(dir) / "truth.json").string(),
                    sim::RenderTruthJson(job));
}

// The simulation's summary, to `to` (stderr when an output is stdout).
void PrintSimulation(const sim::SimulatedJob& job, size_t ops, FILE* to) {
  const sim::JobSection& j = job.spec.job;
  std::fprintf(to, "strag simulate: %s\n", job.spec.name.c_str());
  std::fprintf(
      to,
      "  job: DP %d%s x PP %d x TP %d x CP %d (VPP %d) = %lld GPUs, "
      "%d microbatches, %d steps, %zu ops\n",
      j.dp,
      j.backup_workers
          ? (" + " + std::to_string(j.backup_workers) + " backup").c_str()
          : "",
      j.pp, j.tp, j.cp, j.vpp,
      static_cast<long long>(int64_t{job.dp_replicas} * j.pp * j.tp * j.cp),
      j.microbatches, j.steps, ops);
  std::fprintf(to, "  mean step time %.2f ms\n",
               1e3 * PairwiseMean(job.step_times.opt));
  for (const sim::TruthRecord& t : job.truth) {
    std::fprintf(to, "  injected %-16s", t.kind.c_str());
    if (t.rank >= 0) {
      std::fprintf(to, " rank %lld (dp %d, stage %d, tp %d, node %d)",
                   static_cast<long long>(t.rank), t.dp, t.pp, t.tp, t.node);
    } else if (t.node >= 0) {
      std::fprintf(to, " node %d", t.node);
    }
    std::fprintf(to,
                 ": %zu of %zu steps, true slowdown %.4f (%+.2f ms per step; "
                 "%+.2f ms without host delays)\n",
                 t.steps.size(), job.steps.size(), t.slowdown, t.excess_step_ms,
                 t.blocking_excess_step_ms);
  }
  std::fprintf(to, "\n");
}

}  // namespace

namespace {

// The spec file and its sequence-length file: no output may replace them.
void AddSpecInputs(const Flags& flags, const sim::JobSpec& spec,
                   OutputFiles* out) {
  if (flags.Has("preset") || flags.positional().empty()) return;
  const std::string& path = flags.positional()[0];
  out->AddInput(path);
  if (spec.sequences.kind == sim::SequenceSection::Kind::kFile) {
    out->AddInput(
        (fs::path(path).parent_path() / spec.sequences.path).string());
  }
}

}  // namespace

Status RunSimulate(const std::vector<std::string>& args) {
  FlagSpec spec{
      .with_value = {"preset", "out", "steps-window", "seed", "format",
                     "clock-offset-ms", "nccl-names", "kernels-per-op",
                     "max-ops", "live", "rate", "job", "token-file",
                     "records-per-request", "window-steps"},
      .booleans = {"analyze", "no-truth", "list-presets", "gzip",
                   "truncate-rank-lists"},
  };
  AddReportFlags(&spec);
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  if (flags.Has("list-presets")) {
    for (const std::string& name : sim::PresetNames()) {
      std::printf("%s\n", name.c_str());
    }
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(sim::JobSpec job_spec, LoadSpec(flags));
  ASSIGN_OR_RETURN(std::optional<uint64_t> seed, flags.GetUint64("seed"));
  if (seed) job_spec.job.seed = *seed;
  if (flags.Has("live")) {
    if (g_live_simulation == nullptr) {
      return Internal("--live is played by strag-serve (strag hands it over)");
    }
    return g_live_simulation(flags, job_spec);
  }
  std::pair<int64_t, int64_t> window{0, job_spec.job.steps - 1};
  if (auto text = flags.Get("steps-window")) {
    ASSIGN_OR_RETURN(window, ParseWindow(*text, job_spec.job.steps));
    if (!flags.Has("out")) {
      return InvalidInput(
          "flag --steps-window needs --out DIR (it selects the steps "
          "written)");
    }
  }
  ASSIGN_OR_RETURN(
      const std::optional<int64_t> max_ops,
      flags.GetInt("max-ops", 1, std::numeric_limits<int64_t>::max()));
  if (!flags.Has("out") && !flags.Has("analyze")) {
    return InvalidInput("simulate needs --out DIR and/or --analyze");
  }
  ASSIGN_OR_RETURN(const OutputFormats formats, ParseFormats(flags, job_spec));
  ASSIGN_OR_RETURN(const report::ReportOptions options,
                   ParseReportOptions(flags, /*profiler=*/false));
  if (flags.Has("format") && !flags.Has("out")) {
    return InvalidInput("flag --format needs --out DIR");
  }
  // Only the CSV streams: the Kineto writer needs the whole table.
  const bool stream = flags.Has("out") && !formats.kineto;
  const MemoryBudget budget = ThisMachinesBudget();
  // A window of steps within kStreamWindowBytes and a quarter of the
  // budget; --window-steps N sets it (the tests cut jobs small with it).
  ASSIGN_OR_RETURN(
      const std::optional<int64_t> window_steps,
      flags.GetInt("window-steps", 1, std::numeric_limits<int64_t>::max()));
  const int64_t stream_window_steps =
      !stream ? 0
              : window_steps.value_or(sim::StreamWindowSteps(
                    job_spec, std::min(sim::kStreamWindowBytes,
                                       budget.bytes / 4)));
  // Refused before anything the size of the job is allocated.
  RETURN_IF_ERROR(CheckSimulationFits(
      flags.Has("preset") ? "preset " + *flags.Get("preset")
                          : flags.positional()[0],
      job_spec,
      {.write = flags.Has("out"),
       .first_step = window.first,
       .last_step = window.second,
       .analyze = flags.Has("analyze"),
       .threads = static_cast<int64_t>(options.whatif.threads > 0
                                           ? options.whatif.threads
                                           : HardwareThreads()),
       .stream_window_steps = stream_window_steps},
      max_ops, budget));
  const bool write = flags.Has("out");
  // The outputs and --perfetto-steps checked before any work.
  OutputFiles out;
  AddSpecInputs(flags, job_spec, &out);
  if (write) RETURN_IF_ERROR(out.DeclareDirectory("--out", *flags.Get("out")));
  RETURN_IF_ERROR(DeclareReportOutputs(flags, &out));
  const int64_t last_step = job_spec.job.steps - 1;
  RETURN_IF_ERROR(CheckTimelineSteps(
      options, write ? window.first : 0,
      write ? std::min(window.second, last_step) : last_step));
  FILE* log = out.uses_stdout() ? stderr : stdout;
  sim::SimulateOptions sim_options{.truth = !flags.Has("no-truth"),
                                   .keep_times = write};
  sim::SimulatedJob job;
  trace::OpsTable table;
  size_t ops = 0;
  if (stream) {
    sim_options.window_steps = stream_window_steps;
    RETURN_IF_ERROR(out.CreateDirectories(*flags.Get("out")));
    ASSIGN_OR_RETURN(
        StreamedCsv csv,
        SimulateToOpsCsv(
            job_spec, sim_options, window.first, window.second,
            (fs::path(*flags.Get("out")) / "ops.csv.gz").string(), &out));
    job = std::move(csv.job);
    ops = static_cast<size_t>(csv.rows);
  } else {
    ASSIGN_OR_RETURN(job, sim::Simulate(job_spec, sim_options));
    if (write) table = sim::ToOpsTable(job, window.first, window.second);
    ops = write ? table.size() : job.num_nodes() * job.num_lanes();
  }
  PrintSimulation(job, ops, log);
  if (write) {
    RETURN_IF_ERROR(
        WriteOutputs(job, table, *flags.Get("out"), formats, &out, log));
  }
  if (!flags.Has("analyze")) return out.Commit();
  report::ReportInput in;
  const std::string source = "simulated " + job.spec.name;
  if (write && formats.csv) {
    // Analyse exactly what was written: the ops CSV read back (from its
    // temporary file, renamed with the report's files), as `strag analyze
    // DIR/ops.csv.gz` reads it (the same report, byte for byte).
    table = trace::OpsTable();
    ASSIGN_OR_RETURN(
        table, ingest::ReadOpsCsvFile(out.Staged(
                   (fs::path(*flags.Get("out")) / "ops.csv.gz").string())));
    ASSIGN_OR_RETURN(in,
                     report::OpsTableInput(table, sim::MetaOf(job), source));
    table = trace::OpsTable();
  } else if (write) {
    ASSIGN_OR_RETURN(in,
                     report::OpsTableInput(table, sim::MetaOf(job), source));
    table = trace::OpsTable();
  } else {
    in = report::SimulatedInput(&job);
  }
  ASSIGN_OR_RETURN(const report::Report report,
                   report::BuildReport(std::move(in), options));
  return WriteReport(flags, report, &out);
}

}  // namespace strag::cli
