// SPDX-License-Identifier: Apache-2.0
// ReadOpsCsvFile: reads an ops CSV file (plain or gzip) by streaming it
// through OpsCsvParser, for traces too large to hold as text.

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FILE_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FILE_H_

#include <cstddef>
#include <string>

#include "base/status.h"
#include "ingest/common/gunzip_stream.h"
#include "ingest/common/input_limits.h"
#include "trace/ops_table.h"

namespace strag::ingest {

using ::strag::Result;

struct ReadOpsCsvOptions {
  // Text bytes parsed at a time, and file bytes read at a time (0: 256 KiB,
  // or 512 KiB per parsing thread). Tests make it tiny to cut the text
  // everywhere.
  size_t block_bytes = 0;
  // Inflate gzip on a second thread while parsing. Same result either way.
  bool inflate_on_thread = true;
  // Threads that parse rows (0: one per hardware thread); blocks then grow
  // to give each a part. Same result for any number.
  size_t threads = 0;
  // max_line_bytes: the longest line taken (the others are not used here).
  InputLimits limits = {};
  // The inflater of a gzip file: ISA-L where the build has it
  // (IsalAvailable(); else zlib), several times faster than zlib. The same
  // table and errors either way, but for damaged deflate data (see below).
  GzipEngine gzip_engine = GzipEngine::kIsal;
  // false: `dur_ns` is left empty (OpsCsvParser::DropNsDurations), for a
  // caller that reads durations only through DurS32, as the in-memory
  // analysis does: 8 of the table's 65 bytes per op.
  bool ns_durations = true;
  // The keys (rank, dp_rank, stage, step) by runs of rows
  // (trace::OpsTable::key_runs), not in columns: for a caller that reads the
  // table with whatif::PrepareTrace only. 20 bytes per row less.
  bool key_runs = false;
  // false: `microbatch` is kept only where the table has extra columns
  // (OpsCsvParser::KeepMicrobatchesWithExtraOnly), as the analysis reads it
  // (the sequence lengths, with `seq_lens`); empty otherwise.
  bool microbatches = true;
};

// Reads the ops CSV file at `path`: the same table, or the same error with
// the same message, as ParseOpsCsv(ReadFileMaybeGz(path), path) (zlib), but
// the text is never held whole. A file whose content starts with the gzip
// magic is inflated block by block (concatenated members too), on a second
// thread by default, while the parser works on the blocks already inflated.
// Memory beyond the table: kTextRingBlocks blocks, the inflater's window and
// the partial last line. The columns are reserved from the expected text
// size (the file size, or the gzip trailer's size when it is plausible).
//
// Errors: kNotFound when the file cannot be opened or read; kInvalidInput
// for damaged gzip or bad CSV (naming line and column, see ParseOpsCsv).
// Damaged gzip is one error that names the file and a compressed byte
// offset, counted from the start of the file: "t.csv.gz: gzip stream is
// truncated at compressed byte N" or "...: gzip stream is corrupt at byte
// N: <reason>". Both engines give the same message for truncation, damaged
// headers and checksums and junk after a member; for damaged deflate data,
// N and the reason are where and how the engine noticed (GzipEngine: with
// ISA-L, coarser reasons and at times a few bytes off zlib's N). Damaged
// gzip wins over bad CSV, as if the file were inflated first, so after a
// CSV error the rest of a gzip file is still inflated (not parsed) to check
// it; but a refusal (a line over the limit, a NUL byte in the header) stops
// the reading at once, so a gzip bomb costs no more than its first bad line.
Result<trace::OpsTable> ReadOpsCsvFile(const std::string& path,
                                       const ReadOpsCsvOptions& options = {});

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FILE_H_
