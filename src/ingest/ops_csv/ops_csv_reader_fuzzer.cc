// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the ops CSV reader and writer: any input must parse
// or fail cleanly, the same in one piece as cut in three (OpsCsvParser),
// also under a small line limit (a refusal must not depend on the cut),
// and for every other input as `strag analyze` reads it (keys by runs,
// microbatches only beside extra columns: the same table once the runs are
// columns again), and whatever parses must survive a write/parse round trip
// unchanged.
// Build with clang and -fsanitize=fuzzer,address,undefined
// (STRAG_BUILD_FUZZERS=ON); ops_csv_fuzz_driver.cc runs it without
// libFuzzer, in CI.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ingest/common/gzip.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_parser.h"
#include "ingest/ops_csv/ops_csv_reader.h"
#include "ingest/ops_csv/ops_csv_writer.h"

namespace {

bool SameTable(const strag::trace::OpsTable& a,
               const strag::trace::OpsTable& b) {
  if (a.extra.size() != b.extra.size()) return false;
  for (size_t i = 0; i < a.extra.size(); ++i) {
    if (a.extra[i] != b.extra[i]) {
      return false;
    }
  }
  return a.rank == b.rank && a.dp == b.dp && a.pp == b.pp && a.step == b.step &&
         a.op_type == b.op_type && a.seq_id == b.seq_id && a.chunk == b.chunk &&
         a.microbatch == b.microbatch && a.global_chunk == b.global_chunk &&
         a.start_ns == b.start_ns && a.dur_ns == b.dur_ns &&
         a.start_s32 == b.start_s32 && a.dur_s32 == b.dur_s32 &&
         a.start_rem_as == b.start_rem_as && a.tp == b.tp && a.cp == b.cp &&
         a.tokens == b.tokens;
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "ops_csv fuzz: %s\n", what.c_str());
  std::abort();
}

// Parses `text` cut at two places chosen from its length and first byte;
// `analysis`: as `strag analyze` reads for itself, the keys then put back
// into columns.
strag::Result<strag::trace::OpsTable> ParseInPieces(std::string_view text,
                                                    uint64_t max_line_bytes,
                                                    bool analysis) {
  const size_t seed = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
  const size_t first = text.size() * seed / 256;
  const size_t second = first + (text.size() - first) / 2;
  strag::ingest::OpsCsvParser parser("fuzz.csv", text.size(), max_line_bytes);
  if (analysis) {
    parser.KeepKeysInRuns();
    parser.KeepMicrobatchesWithExtraOnly();
  }
  for (std::string_view piece :
       {text.substr(0, first), text.substr(first, second - first),
        text.substr(second)}) {
    const strag::Status status = parser.Feed(piece);
    if (!status.ok()) return status;
  }
  auto table = parser.Finish();
  if (table.ok() && analysis) {
    if (table->keys_in_runs != table->rank.empty() && table->size() > 0) {
      Fail("the keys are in runs and in columns, or in neither");
    }
    if (table->microbatch.size() !=
        (table->extra.empty() ? 0 : table->size())) {
      Fail("microbatches kept without extra columns, or dropped with them");
    }
    table->KeysToColumns();
  }
  return table;
}

}  // namespace

// For ops_csv_fuzz_driver.cc: whether the last input parsed.
bool ops_csv_fuzz_last_parsed = false;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ops_csv_fuzz_last_parsed = false;
  (void)strag::ingest::ParseJobMetaYaml(bytes, "fuzz.yaml");
  // Bounded like the reader: a bomb is no reason to hold gigabytes.
  const auto text =
      strag::ingest::MaybeGunzip(bytes, "fuzz.csv", size_t{32} << 20);
  if (!text.ok()) return 0;
  // A small line limit for a third of the inputs.
  const uint64_t max_line_bytes = size % 3 == 1
                                      ? 1 + (size * 2654435761u) % 300
                                      : strag::ingest::kDefaultMaxLineBytes;
  const auto table =
      strag::ingest::ParseOpsCsv(*text, "fuzz.csv", max_line_bytes);
  const bool analysis = size % 2 == 0;
  auto pieces = ParseInPieces(*text, max_line_bytes, analysis);
  if (table.ok() != pieces.ok()) {
    Fail("one piece: " + (table.ok() ? "ok" : table.status().message()) +
         "; pieces: " + (pieces.ok() ? "ok" : pieces.status().message()));
  }
  if (!table.ok()) {
    if (table.status().message() != pieces.status().message()) {
      Fail("errors differ: " + table.status().message() + " vs " +
           pieces.status().message());
    }
    return 0;
  }
  if (analysis && table->extra.empty()) pieces->microbatch = table->microbatch;
  if (!SameTable(*table, *pieces)) Fail("tables differ");
  const std::string written = strag::ingest::WriteOpsCsv(*table);
  const auto again = strag::ingest::ParseOpsCsv(written, "rewritten.csv");
  if (!again.ok()) Fail("rewritten: " + again.status().message());
  if (!SameTable(*table, *again)) Fail("rewritten table differs");
  ops_csv_fuzz_last_parsed = true;
  return 0;
}
