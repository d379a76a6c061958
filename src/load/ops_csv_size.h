// SPDX-License-Identifier: Apache-2.0
// The size of an ops CSV before it is read: how many rows it holds,
// estimated from its first MiB of text, so that `strag analyze` can choose
// between holding the whole trace and analysing it in windows of steps.

#ifndef STRAG_SRC_LOAD_OPS_CSV_SIZE_H_
#define STRAG_SRC_LOAD_OPS_CSV_SIZE_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace strag::load {

// What the in-memory analysis holds per op of an ops CSV at its peak (the
// table, 65 bytes, while it is read; then the columns placing reads and
// the prepared arrays together: 73 bytes measured on trace-AR x16 with the
// process itself, 86 before the other columns were released), with a
// margin, and per extra text column (its values back to back with an
// 8-byte end each: the simulator's `seq_lens` of 4-6 characters adds 13
// bytes; 32 and more when each was a std::string).
inline constexpr uint64_t kInMemoryBytesPerOp = 100;
inline constexpr uint64_t kInMemoryBytesPerExtraColumn = 24;

// Bounds for a file too small to sample: no ops CSV row is shorter than
// 16 bytes ("0,0,0,0,gc,0,0,0" and its line end), and CSV text gzips to no
// less than a 20th of its size in practice (tens of times less for random
// digits); a file of `file_bytes` holds at most this many rows.
inline constexpr uint64_t kMinRowBytes = 16;
inline constexpr uint64_t kMaxTextPerFileByte = 20;
inline uint64_t MaxOpsCsvRows(uint64_t file_bytes) {
  return file_bytes / kMinRowBytes * kMaxTextPerFileByte;
}

struct OpsCsvSize {
  uint64_t rows = 0;           // estimated; 0 when unknown (a pipe, no rows)
  bool whole = false;          // the first MiB was the whole text: exact
  double text_per_byte = 1.0;  // text bytes per file byte (gzip ratio)
  // Header fields that are not ops CSV columns (kept as text per row).
  uint64_t extra_columns = 0;
  // What the in-memory analysis would hold, bytes (at most 2^62), with a
  // margin: for the memory budget.
  uint64_t InMemoryBytes() const;
  // Whether the job's windows held in memory (StreamOptions::hold) would
  // take less than its table: held windows cost 16 bytes per op and ~192 MB
  // of machinery for windows of 1M ops (a table of a window's rows, a window
  // being prepared, the analysis); the table and its analysis ~40 bytes per
  // op and kInMemoryBytesPerExtraColumn per extra column. Measured on
  // 2026-12-04 (simulated jobs with `seq_lens`): 4.8M ops 307 MB whole
  // against 244 MB held; 8.6M ops 530 MB (with --plan) against 333 MB;
  // llama-16k, 7.3M ops, 481 against 299 MB. So from ~4M ops with one
  // extra column, ~8M without.
  bool HeldWindowsTakeLess() const;
};

// The file's rows: its whole text when that fits in the first MiB, else the
// file's size times the text per file byte and the lines per text byte of
// the first MiB (a gzip file's ratio taken from its start; the trailer's
// size covers only the last member). Fails like TextReader::Open.
Result<OpsCsvSize> EstimateOpsCsvSize(const std::string& path);

}  // namespace strag::load

#endif  // STRAG_SRC_LOAD_OPS_CSV_SIZE_H_
