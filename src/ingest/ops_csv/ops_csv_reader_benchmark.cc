// SPDX-License-Identifier: Apache-2.0
// Micro-benchmarks of the ops CSV path on the published AR trace (117,216
// rows, 8.8 MB of CSV): gunzip, parse and write, measured separately, and
// the streaming file reader (read + gunzip + parse), threaded or not.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "ingest/common/file.h"
#include "base/parallel_for.h"
#include "ingest/common/gunzip_stream.h"
#include "ingest/common/gzip.h"
#include "ingest/common/text_blocks.h"
#include "ingest/common/text_reader.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "ingest/ops_csv/ops_csv_parser.h"
#include "ingest/ops_csv/ops_csv_reader.h"
#include "ingest/ops_csv/ops_csv_writer.h"

namespace strag::ingest {
namespace {

const std::string& TracePath() {
  static const std::string path =
      std::string(STRAG_SHARED_DATA_DIR) + "/osdi25-whatif/trace-AR.csv.gz";
  return path;
}

// The compressed file, read once; empty when the data is absent.
const std::string& CompressedTrace() {
  static const std::string bytes = [] {
    Result<std::string> read = ReadFile(TracePath());
    return read.ok() ? std::move(read).value() : std::string();
  }();
  return bytes;
}

const std::string& Csv() {
  static const std::string csv = [] {
    Result<std::string> text = MaybeGunzip(CompressedTrace(), TracePath());
    return text.ok() ? std::move(text).value() : std::string();
  }();
  return csv;
}

void BM_GunzipAr(benchmark::State& state) {
  if (CompressedTrace().empty()) {
    state.SkipWithError("reference data not found");
    return;
  }
  for (auto _ : state) {
    Result<std::string> csv = MaybeGunzip(CompressedTrace(), TracePath());
    benchmark::DoNotOptimize(csv);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(Csv().size()));
}
BENCHMARK(BM_GunzipAr)->Unit(benchmark::kMillisecond);

void BM_ParseOpsCsvAr(benchmark::State& state) {
  if (Csv().empty()) {
    state.SkipWithError("reference data not found");
    return;
  }
  for (auto _ : state) {
    Result<trace::OpsTable> table = ParseOpsCsv(Csv(), TracePath());
    benchmark::DoNotOptimize(table);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(Csv().size()));
}
BENCHMARK(BM_ParseOpsCsvAr)->Unit(benchmark::kMillisecond);

// The whole-file path the streaming reader replaces: ReadFileMaybeGz, then
// ParseOpsCsv.
void BM_ReadWholeThenParseAr(benchmark::State& state) {
  if (CompressedTrace().empty()) {
    state.SkipWithError("reference data not found");
    return;
  }
  for (auto _ : state) {
    Result<std::string> csv = ReadFileMaybeGz(TracePath());
    Result<trace::OpsTable> table = ParseOpsCsv(*csv, TracePath());
    benchmark::DoNotOptimize(table);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(Csv().size()));
}
BENCHMARK(BM_ReadWholeThenParseAr)->Unit(benchmark::kMillisecond);

// ReadOpsCsvFile; the arguments say whether gzip is inflated on a second
// thread, and by ISA-L (else zlib), and how many threads parse (0: one per
// core, as strag analyze reads).
void BM_ReadOpsCsvFileAr(benchmark::State& state) {
  if (CompressedTrace().empty()) {
    state.SkipWithError("reference data not found");
    return;
  }
  const ReadOpsCsvOptions options{
      .inflate_on_thread = state.range(0) != 0,
      .threads = static_cast<size_t>(state.range(2)),
      .gzip_engine =
          state.range(1) != 0 ? GzipEngine::kIsal : GzipEngine::kZlib};
  for (auto _ : state) {
    Result<trace::OpsTable> table = ReadOpsCsvFile(TracePath(), options);
    benchmark::DoNotOptimize(table);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(Csv().size()));
}
BENCHMARK(BM_ReadOpsCsvFileAr)
    ->ArgNames({"threaded", "isal", "threads"})
    ->ArgsProduct({{0, 1}, {0, 1}, {1}})
    ->Args({1, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The text size of the file at $STRAG_BENCH_CSV (plain or gzip), counted
// once; 0 when the variable is unset or the file unreadable.
uint64_t EnvCsvTextBytes() {
  static const uint64_t bytes = []() -> uint64_t {
    const char* path = std::getenv("STRAG_BENCH_CSV");
    if (path == nullptr) return 0;
    Result<std::unique_ptr<TextReader>> reader = TextReader::Open(path, 1 << 20);
    if (!reader.ok()) return 0;
    uint64_t total = 0;
    const Status status = ForEachTextBlock(
        reader->get(),
        {.block_bytes = 1 << 20, .inflate_on_thread = false, .sink_refused = {}},
        [&total](std::string_view block) {
          total += block.size();
          return Status::Ok();
        });
    return status.ok() ? total : 0;
  }();
  return bytes;
}

// ReadOpsCsvFile on a large file of your own (STRAG_BENCH_CSV=path, e.g.
// `strag simulate --out` or bench/anchor/tile_ops_csv.py output, plain or
// .gz); the arguments are the number of parsing threads (0: one per core),
// whether gzip is inflated by ISA-L (else zlib), and whether the table is
// read as `strag analyze` reads it for itself (load/job_files.cc: no
// nanosecond durations, keys by runs, microbatches only beside extra
// columns) rather than whole. Bytes are text bytes.
void BM_ReadOpsCsvFileEnv(benchmark::State& state) {
  if (EnvCsvTextBytes() == 0) {
    state.SkipWithError("set STRAG_BENCH_CSV to an ops CSV file");
    return;
  }
  const bool as_analyze = state.range(2) != 0;
  const ReadOpsCsvOptions options{
      .threads = static_cast<size_t>(state.range(0)),
      .gzip_engine =
          state.range(1) != 0 ? GzipEngine::kIsal : GzipEngine::kZlib,
      .ns_durations = !as_analyze,
      .key_runs = as_analyze,
      .microbatches = !as_analyze};
  for (auto _ : state) {
    Result<trace::OpsTable> table =
        ReadOpsCsvFile(std::getenv("STRAG_BENCH_CSV"), options);
    if (!table.ok()) state.SkipWithError(table.status().message().c_str());
    benchmark::DoNotOptimize(table);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(EnvCsvTextBytes()));
}
BENCHMARK(BM_ReadOpsCsvFileEnv)
    ->ArgNames({"threads", "isal", "analyze"})
    ->ArgsProduct({{1, 0}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same file read as `strag analyze --window-ops` reads it: rows taken
// out of the parser after every block (so the columns stay small and warm),
// extra columns dropped, gzip inflated by ISA-L on a second thread; the
// argument is the number of parsing threads (0: one per core). Reading and
// parsing only: what the streamed path costs before any analysis.
void BM_StreamOpsCsvEnv(benchmark::State& state) {
  if (EnvCsvTextBytes() == 0) {
    state.SkipWithError("set STRAG_BENCH_CSV to an ops CSV file");
    return;
  }
  const auto threads = static_cast<size_t>(
      state.range(0) == 0 ? HardwareThreads() : state.range(0));
  const size_t block_bytes = 8 * threads * OpsCsvParser::kMinPartBytes;
  for (auto _ : state) {
    Result<std::unique_ptr<TextReader>> reader = TextReader::Open(
        std::getenv("STRAG_BENCH_CSV"), block_bytes, GzipEngine::kIsal);
    if (!reader.ok()) {
      state.SkipWithError(reader.status().message().c_str());
      return;
    }
    OpsCsvParser parser("bench", 0, kDefaultMaxLineBytes, threads);
    parser.DropExtraColumns();
    size_t rows = 0;
    trace::OpsTable batch;
    const Status status = ForEachTextBlock(
        reader->get(),
        {.block_bytes = block_bytes, .inflate_on_thread = true,
         .sink_refused = {}},
        [&](std::string_view block) -> Status {
          const Status fed = parser.Feed(block);
          parser.TakeRows(&batch);
          rows += batch.size();
          return fed;
        });
    Result<trace::OpsTable> last = parser.Finish();
    if (!status.ok() || !last.ok()) state.SkipWithError("bad file");
    benchmark::DoNotOptimize(rows);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(EnvCsvTextBytes()));
}
BENCHMARK(BM_StreamOpsCsvEnv)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_WriteOpsCsvAr(benchmark::State& state) {
  const Result<trace::OpsTable> table = ParseOpsCsv(Csv(), TracePath());
  if (Csv().empty() || !table.ok()) {
    state.SkipWithError("reference data not found");
    return;
  }
  for (auto _ : state) {
    std::string csv = WriteOpsCsv(*table);
    benchmark::DoNotOptimize(csv);
  }
}
BENCHMARK(BM_WriteOpsCsvAr)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strag::ingest
