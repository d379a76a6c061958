// SPDX-License-Identifier: Apache-2.0
// End-to-end workloads of `strag analyze`, phase by phase, on one thread:
// the three published traces and trace-AR tiled N times across DP. Prints
// the best of several runs; docs/performance.md records the figures.
//
// usage: strag_bench [--data DIR] [--runs N] [--tile N] [--write-tiled FILE]
//                    [--only-tiled] [--threads N] [--sim PRESET]
// --sim measures the simulator alone on a preset (no truth replays, times
// not kept): simulated ops per second on one thread.
// --threads 1 (default) is the strict single-thread figure; otherwise the
// inflation runs on its own thread and the counterfactual replays on
// `threads` threads (0 = one per core).

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ingest/common/file.h"
#include "ingest/common/gzip.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "ingest/ops_csv/ops_csv_reader.h"
#include "ingest/ops_csv/ops_csv_writer.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

template <typename T>
T Check(strag::Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().message().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

struct Phases {
  double read = 1e9, prepare = 1e9, analyze = 1e9;
  uint64_t replayed_ops = 0;
  double slowdown = 0;
};

// Best of `runs` for each phase of the analysis of `path`: read (stream,
// inflate, parse), prepare, analyze. `threads` == 1 is the strict
// single-thread figure: inflation on the parsing thread too.
Phases Measure(const std::string& path, const strag::trace::JobMeta& meta,
               int runs, size_t threads) {
  strag::whatif::WhatIfOptions options;
  options.threads = threads;
  strag::ingest::ReadOpsCsvOptions read_options;
  read_options.inflate_on_thread = threads != 1;
  Phases best;
  for (int run = 0; run < runs; ++run) {
    const auto t0 = Clock::now();
    auto table =
        Check(strag::ingest::ReadOpsCsvFile(path, read_options), "read");
    const auto t1 = Clock::now();
    auto prepared = Check(strag::whatif::PrepareTrace(table, meta), "prepare");
    const auto t2 = Clock::now();
    auto result = Check(strag::whatif::Analyze(prepared, options), "analyze");
    const auto t3 = Clock::now();
    best.read = std::min(best.read, Seconds(t0, t1));
    best.prepare = std::min(best.prepare, Seconds(t1, t2));
    best.analyze = std::min(best.analyze, Seconds(t2, t3));
    best.replayed_ops = result.replayed_ops;
    best.slowdown = result.slowdown;
  }
  return best;
}

void Print(const std::string& name, size_t ops, const Phases& p) {
  const double total = p.read + p.prepare + p.analyze;
  std::printf(
      "%-14s %9zu ops  read %7.1f ms  prepare %6.1f ms  analyze %7.1f ms  "
      "total %7.1f ms  S %.4f  replay %.0f M ops/s (%.2f M ops replayed)\n",
      name.c_str(), ops, 1e3 * p.read, 1e3 * p.prepare, 1e3 * p.analyze,
      1e3 * total, p.slowdown,
      static_cast<double>(p.replayed_ops) / p.analyze / 1e6,
      static_cast<double>(p.replayed_ops) / 1e6);
}

// trace-AR tiled `copies` times across DP: copy c gets dp_rank + dp * c and
// rank + world * c (world = 64 for AR's DP 4 x PP 4 x TP 4).
strag::trace::OpsTable Tile(const strag::trace::OpsTable& t, int copies,
                            int32_t dp, int32_t world) {
  strag::trace::OpsTable out;
  out.Reserve(t.size() * static_cast<size_t>(copies));
  for (int c = 0; c < copies; ++c) {
    for (size_t r = 0; r < t.size(); ++r) {
      out.rank.push_back(t.rank[r] + world * c);
      out.dp.push_back(t.dp[r] + dp * c);
      out.pp.push_back(t.pp[r]);
      out.step.push_back(t.step[r]);
      out.op_type.push_back(t.op_type[r]);
      out.seq_id.push_back(t.seq_id[r]);
      out.chunk.push_back(t.chunk[r]);
      out.microbatch.push_back(t.microbatch[r]);
      out.global_chunk.push_back(t.global_chunk[r]);
      out.start_ns.push_back(t.start_ns[r]);
      out.dur_ns.push_back(t.dur_ns[r]);
      out.start_s32.push_back(t.start_s32[r]);
      out.dur_s32.push_back(t.dur_s32[r]);
    }
  }
  return out;
}

long PeakRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = STRAG_SHARED_DATA_DIR "/osdi25-whatif";
  std::string write_tiled;
  int runs = 5, tile = 16;
  size_t threads = 1;
  bool only_tiled = false;
  std::string sim_preset;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--data" && i + 1 < argc)
      data = argv[++i];
    else if (a == "--runs" && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (a == "--tile" && i + 1 < argc)
      tile = std::atoi(argv[++i]);
    else if (a == "--write-tiled" && i + 1 < argc)
      write_tiled = argv[++i];
    else if (a == "--only-tiled")
      only_tiled = true;
    else if (a == "--sim" && i + 1 < argc)
      sim_preset = argv[++i];
    else if (a == "--threads" && i + 1 < argc)
      threads = std::strtoul(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (!sim_preset.empty()) {
    const auto spec = Check(strag::sim::PresetSpec(sim_preset), "preset");
    double best = 1e9;
    size_t ops = 0;
    for (int run = 0; run < runs; ++run) {
      const auto t0 = Clock::now();
      auto job = Check(
          strag::sim::Simulate(spec, {.truth = false, .keep_times = false}),
          "simulate");
      best = std::min(best, Seconds(t0, Clock::now()));
      ops = job.num_nodes() * job.num_lanes();
    }
    std::printf(
        "simulate %-20s %9zu ops  %7.1f ms  %.1f M simulated ops/s "
        "(one thread, no truth replays)\n",
        sim_preset.c_str(), ops, 1e3 * best,
        static_cast<double>(ops) / best / 1e6);
    return 0;
  }
  std::printf("threads: %zu (1 = everything on one thread, 0 = one per core)\n",
              threads);
  if (!std::filesystem::exists(data + "/trace-AR.csv.gz")) {
    std::printf("reference data not found at %s: nothing to measure\n",
                data.c_str());
    return 0;
  }
  for (const char* name : {"AR", "ST", "SE"}) {
    if (only_tiled) break;
    const std::string path = data + "/trace-" + name + ".csv.gz";
    const std::string meta_path = data + "/meta-" + name + ".yaml";
    auto meta =
        Check(strag::ingest::ParseJobMetaYaml(
                  Check(strag::ingest::ReadFile(meta_path), "meta"), meta_path),
              "meta");
    auto table =
        Check(strag::ingest::ParseOpsCsv(
                  Check(strag::ingest::ReadFileMaybeGz(path), "read"), path),
              "parse");
    Print(std::string("trace-") + name, table.size(),
          Measure(path, meta, runs, threads));
  }
  // The tiled trace: written to a file and measured from it.
  const std::string ar = data + "/trace-AR.csv.gz";
  const auto base =
      Check(strag::ingest::ParseOpsCsv(
                Check(strag::ingest::ReadFileMaybeGz(ar), "read"), ar),
            "parse");
  const std::string tiled_path = write_tiled.empty()
                                     ? (std::filesystem::temp_directory_path() /
                                        "strag-bench-AR-tiled.csv.gz")
                                           .string()
                                     : write_tiled;
  {
    const auto tiled = Tile(base, tile, 4, 64);
    auto gz = Check(
        strag::ingest::GzipCompress(strag::ingest::WriteOpsCsv(tiled)), "gzip");
    std::ofstream(tiled_path, std::ios::binary) << gz;
  }
  strag::trace::JobMeta meta;
  meta.tp = 4;
  const auto rss_before = PeakRssKb();
  const Phases p = Measure(tiled_path, meta, std::max(1, runs / 2), threads);
  Print("AR-tiled-x" + std::to_string(tile),
        base.size() * static_cast<size_t>(tile), p);
  std::printf(
      "peak RSS of this process: %ld MB (before the tiled runs: %ld MB); "
      "for the CLI alone run: /usr/bin/time -v strag analyze %s\n",
      PeakRssKb() / 1024, rss_before / 1024, tiled_path.c_str());
  if (write_tiled.empty()) std::filesystem::remove(tiled_path);
  return 0;
}
