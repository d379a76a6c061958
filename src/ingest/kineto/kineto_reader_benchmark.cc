// SPDX-License-Identifier: Apache-2.0
// Benchmarks of the Kineto reader, in MB/s of JSON text:
// - a synthetic trace (~300 B events, the shape torch.profiler writes) held
//   in memory: the splitter alone, and the whole parse;
// - the same trace as a .json and a .json.gz file under /tmp: ReadKinetoFile
//   with ISA-L or zlib, inflating on a second thread or not;
// - every file of ../shared/data/hta-kineto (read from disk, gzip);
// - BM_ReadTraceSet: every file of $STRAG_KINETO_BENCH_DIR (skipped when
//   unset), all held at once, for peak-memory runs under /usr/bin/time -v.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ingest/common/file.h"
#include "ingest/common/gzip.h"
#include "ingest/kineto/kineto_file.h"
#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/kineto_test_util.h"
#include "ingest/kineto/trace_splitter.h"

namespace strag::ingest {
namespace {

// ~100 MB of JSON.
const std::string& SyntheticJson() {
  static const std::string json = [] {
    kineto::SyntheticTraceSpec spec;
    spec.steps = 50;
    spec.kernels_per_step = 2000;
    spec.kernels_per_collective = 25;
    return kineto::SyntheticKinetoTrace(spec);
  }();
  return json;
}

std::string WriteOnce(const std::string& name, const std::string& bytes) {
  const std::string path =
      (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

const std::string& SyntheticJsonPath() {
  static const std::string path =
      WriteOnce("strag_kineto_bench.json", SyntheticJson());
  return path;
}

const std::string& SyntheticGzPath() {
  static const std::string path = [] {
    Result<std::string> gz = GzipCompress(SyntheticJson());
    return WriteOnce("strag_kineto_bench.json.gz", gz.ok() ? *gz : "");
  }();
  return path;
}

void SetBytes(benchmark::State& state, size_t bytes) {
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

void BM_SplitSynthetic(benchmark::State& state) {
  const std::string& json = SyntheticJson();
  for (auto _ : state) {
    size_t events = 0;
    kineto::TraceSplitter splitter(
        "bench.json", size_t{256} << 10, {},
        [&events](const kineto::EventBatch& batch) {
          events += batch.elements->size();
          return Status::Ok();
        },
        [](std::string_view, std::string_view, uint64_t) {
          return Status::Ok();
        });
    for (size_t at = 0; at < json.size(); at += size_t{256} << 10) {
      (void)splitter.Feed(std::string_view(json).substr(at, size_t{256} << 10));
    }
    (void)splitter.Finish();
    benchmark::DoNotOptimize(events);
  }
  SetBytes(state, json.size());
}
BENCHMARK(BM_SplitSynthetic)->Unit(benchmark::kMillisecond);

void BM_ParseSynthetic(benchmark::State& state) {
  const std::string& json = SyntheticJson();
  for (auto _ : state) {
    Result<trace::RankTrace> trace = ParseKinetoTrace(json, "rank-3.json");
    if (!trace.ok()) state.SkipWithError(trace.status().message().c_str());
    benchmark::DoNotOptimize(trace);
  }
  SetBytes(state, json.size());
}
BENCHMARK(BM_ParseSynthetic)->Unit(benchmark::kMillisecond);

// Args: gzip (0/1), ISA-L (0/1), inflate on a thread (0/1).
void BM_ReadSyntheticFile(benchmark::State& state) {
  const bool gz = state.range(0) != 0;
  const std::string& path = gz ? SyntheticGzPath() : SyntheticJsonPath();
  ReadKinetoOptions options;
  options.gzip_engine =
      state.range(1) != 0 ? GzipEngine::kIsal : GzipEngine::kZlib;
  options.inflate_on_thread = state.range(2) != 0;
  for (auto _ : state) {
    Result<trace::RankTrace> trace = ReadKinetoFile(path, options);
    if (!trace.ok()) state.SkipWithError(trace.status().message().c_str());
    benchmark::DoNotOptimize(trace);
  }
  SetBytes(state, SyntheticJson().size());
}
BENCHMARK(BM_ReadSyntheticFile)
    ->ArgNames({"gz", "isal", "thread"})
    ->Args({0, 0, 0})
    ->Args({1, 1, 1})
    ->Args({1, 1, 0})
    ->Args({1, 0, 1})
    ->Args({1, 0, 0})
    ->Unit(benchmark::kMillisecond);

const std::vector<std::string>& HtaFiles() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> found;
    const std::string root = std::string(STRAG_SHARED_DATA_DIR) + "/hta-kineto";
    std::error_code error;
    for (std::filesystem::recursive_directory_iterator it(root, error), end;
         !error && it != end; it.increment(error)) {
      if (it->path().string().ends_with(".json.gz")) {
        found.push_back(it->path().string());
      }
    }
    std::sort(found.begin(), found.end());
    return found;
  }();
  return files;
}

void BM_ReadHtaKineto(benchmark::State& state) {
  const std::vector<std::string>& files = HtaFiles();
  if (files.empty()) {
    state.SkipWithError("reference data not found");
    return;
  }
  size_t bytes = 0;
  for (const std::string& file : files) {
    Result<std::string> text = ReadFileMaybeGz(file);
    bytes += text.ok() ? text->size() : 0;
  }
  ReadKinetoOptions options;
  options.parse.default_rank = 0;
  for (auto _ : state) {
    for (const std::string& file : files) {
      Result<trace::RankTrace> trace = ReadKinetoFile(file, options);
      benchmark::DoNotOptimize(trace);
    }
  }
  SetBytes(state, bytes);
}
BENCHMARK(BM_ReadHtaKineto)->Unit(benchmark::kMillisecond);

void BM_ReadTraceSet(benchmark::State& state) {
  const char* dir = std::getenv("STRAG_KINETO_BENCH_DIR");
  if (dir == nullptr) {
    state.SkipWithError("STRAG_KINETO_BENCH_DIR is not set");
    return;
  }
  Result<std::vector<std::string>> files = ListKinetoInputs(dir);
  if (!files.ok()) {
    state.SkipWithError(files.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    // All ranks are held at once, as an analysis of the job holds them.
    std::vector<trace::RankTrace> traces;
    size_t rows = 0;
    for (const std::string& file : *files) {
      Result<trace::RankTrace> trace = ReadKinetoFile(file);
      if (!trace.ok()) state.SkipWithError(trace.status().message().c_str());
      rows += trace.ok() ? trace->size() : 0;
      if (trace.ok()) traces.push_back(std::move(trace).value());
    }
    state.counters["rows"] = static_cast<double>(rows);
  }
}
BENCHMARK(BM_ReadTraceSet)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace strag::ingest
