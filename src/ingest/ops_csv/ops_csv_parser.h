// SPDX-License-Identifier: Apache-2.0
// OpsCsvParser: the ops CSV reader (docs/formats/ops-csv.md) as a push
// parser, so that a large trace is parsed while it is read or inflated and
// only a bounded window of its text is held at a time. ParseOpsCsv is one
// Feed and a Finish; ReadOpsCsvFile feeds file blocks.
//
//   OpsCsvParser parser("trace.csv", /*text_bytes_hint=*/0);
//   for (each piece of the text, in order) RETURN_IF_ERROR(parser.Feed(piece));
//   ASSIGN_OR_RETURN(trace::OpsTable table, parser.Finish());

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_PARSER_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_PARSER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ingest/common/input_limits.h"
#include "ingest/ops_csv/csv_tokenizer.h"
#include "ingest/ops_csv/ops_csv_fields.h"
#include "ingest/ops_csv/ops_csv_schema.h"
#include "trace/ops_table.h"

namespace strag::ingest {

using ::strag::Result;

class OpsCsvParser {
 public:
  // `source_name` labels errors. `text_bytes_hint` is the expected size of
  // the whole text (0 when unknown); it only sizes the columns up front.
  // `max_line_bytes` (at least 1): the longest line taken, its line break
  // included (a record whose quoted field holds line breaks counts whole);
  // a longer one is refused, "trace.csv: byte 1234 (line 5): a line longer
  // than 64 MiB (--max-line-bytes to raise)", before any of it is parsed.
  // So the carried text never exceeds the limit. A NUL byte before the end
  // of the header line (binary data, UTF-16) is refused at once.
  // `threads` parse the rows of a large piece in parallel (at least
  // kMinPartBytes each); the table and the errors are the same for any
  // number.
  OpsCsvParser(std::string_view source_name, size_t text_bytes_hint,
               uint64_t max_line_bytes = kDefaultMaxLineBytes,
               size_t threads = 1);

  // The least text worth a thread of its own, and how many parts a piece
  // is cut into per thread at most.
  static constexpr size_t kMinPartBytes = size_t{256} << 10;
  static constexpr size_t kPartsPerThread = 4;
  OpsCsvParser(const OpsCsvParser&) = delete;
  OpsCsvParser& operator=(const OpsCsvParser&) = delete;

  // Parses the next piece of the text. Pieces may be cut anywhere: inside a
  // field, a quoted field or a `\r\n`. The records that end in this piece
  // are parsed now; the partial last line is copied and kept for the next
  // call (a record whose quoted field holds line breaks is kept whole until
  // it ends). Returns the first error; every later call returns it again.
  // O(size of `text`); only a record that spans pieces is read again, once
  // per later piece that holds a quote.
  Status Feed(std::string_view text);

  // Parses what is left and returns the table: the same table, or the same
  // error (same line, same wording), as ParseOpsCsv on the concatenated
  // pieces. Call once.
  Result<trace::OpsTable> Finish();

  // The rows parsed so far, swapped into `*rows` (whose old columns the
  // parser empties and goes on with, so their memory is reused): for
  // readers that stream a file too large to hold, a batch of rows after
  // each Feed. Absent mc, mb_id and gmc columns are filled with -1 as
  // Finish does.
  void TakeRows(trace::OpsTable* rows);
  // Parse the columns strag does not use (`seq_lens`, `name`...) but keep
  // none of them: the tables have no extra columns. The streamed reader has
  // no use for them.
  void DropExtraColumns() { drop_extra_ = true; }
  // Leave `dur_ns` empty: the durations are read, checked and kept as the
  // binary32 seconds of `dur_s32` (which every ops CSV table has), for
  // callers that read durations only through DurS32. 8 bytes per row less.
  void DropNsDurations() { drop_dur_ns_ = true; }
  // Keep the keys (rank, dp_rank, stage, step) by runs of rows
  // (trace::OpsTable::key_runs) instead of in four columns: 20 bytes per row
  // less, for a caller that reads the table with whatif::PrepareTrace only.
  // Where the first kKeyRunsTrialRows rows or more make more than a run per
  // 4 rows, the keys go back to columns (the table's keys_in_runs tells).
  // Not with TakeRows.
  void KeepKeysInRuns() { keys_in_runs_ = true; }
  static constexpr size_t kKeyRunsTrialRows = size_t{1} << 16;
  // Keep `microbatch` only where the table has extra columns (the sequence
  // lengths read it with `seq_lens`): read and checked, but not held
  // otherwise (the column is then empty, even where mb_id is absent). 4
  // bytes per row less. Not with TakeRows.
  void KeepMicrobatchesWithExtraOnly() { microbatches_with_extra_only_ = true; }

  // For tests: every row through the general path (the tokenizer), the
  // reference that the fast path must match. Call before the first Feed.
  void UseGeneralPathOnly() { general_path_only_ = true; }
  // For tests: the fast path as the baseline x86-64 build compiles it, also
  // where its AVX2 + BMI copy would run (base/cpu_features.h).
  void UseBaselineFastPath() { baseline_fast_path_ = true; }

  // Whether the error refuses the text outright (a line over the limit, a
  // NUL byte in the header): a file reader need not read on.
  bool refused() const { return refused_; }
  // Text bytes fed so far, and complete rows parsed (for messages).
  uint64_t bytes_fed() const { return fed_bytes_; }
  size_t rows() const { return rows_; }

 private:
  Status FeedText(std::string_view text);
  Status FeedOpenRecord(std::string_view text);
  Status CheckHeaderBytes(std::string_view text);
  Status LineTooLong();
  void AppendCarry(std::string_view text);
  Status ParseCarry();
  void NoteQuoteAfterWindow(std::string_view rest);
  Result<size_t> ParseWindow(std::string_view window, bool final);
  bool RecordRunsPastWindow() const;
  void TruncateRows(size_t rows);
  void FoldWindow();
  // The first row the key columns / the microbatch column hold.
  size_t KeyBase() const { return keys_in_runs_ ? window_base_ : 0; }
  size_t MicrobatchBase() const {
    return drop_microbatches_ ? window_base_ : 0;
  }

  Status ParseHeader(std::string_view window, bool final);
  Status SetColumns(const std::vector<CsvField>& fields);
  Status CheckRequiredColumns() const;
  void ReserveRows(std::string_view window);
  Status ParseRows();
  void GrowRows(size_t more);
  size_t ParseRowsFast(std::string_view lines, size_t* count);
  size_t ParseRowsAt(std::string_view lines, size_t at, size_t* count,
                     std::vector<trace::ExtraColumn>* extra);
  size_t ParseRowsAtAvx2Bmi(std::string_view lines, size_t at, size_t* count,
                            std::vector<trace::ExtraColumn>* extra);
  size_t ParseRowsAtBody(std::string_view lines, size_t at, size_t* count,
                         std::vector<trace::ExtraColumn>* extra);
  size_t ParseRowsParallel(std::string_view lines, size_t* count);
  void ClearRows();
  template <typename T>
  static const char* FastInt(const char* p, ops_csv::IntMin min, T* out);
  template <ops_csv::Column C>
  const char* FastFieldOf(const char* p, const char* end, size_t row);
  using FieldReader = const char* (OpsCsvParser::*)(const char* p,
                                                    const char* end,
                                                    size_t row);
  template <size_t... I>
  static constexpr auto FastFieldTable(std::index_sequence<I...> columns);
  const char* FastField(ops_csv::Column c, const char* p, const char* end,
                        size_t row);
  template <size_t... I>
  bool FastPrefix(const char** p, const char* end, size_t row,
                  std::index_sequence<I...> columns);
  const char* FastSeconds(const char* p, const char* end, bool is_duration,
                          size_t row);
  bool ParseField(size_t field_index);
  template <typename T>
  bool ReadInt(size_t field_index, ops_csv::IntMin min,
               trace::Column<T>* column);
  template <typename T>
  bool ReadIntSlow(size_t field_index, ops_csv::IntMin min,
                   trace::Column<T>* column);
  template <typename T>
  bool StoreInt(size_t field_index, ops_csv::IntMin min, std::string_view text,
                T value, trace::Column<T>* column);
  bool ReadSeconds(size_t field_index, bool is_duration,
                   trace::Column<int64_t>* ns, trace::Column<float>* s32);
  bool ReadSecondsSlow(size_t field_index, bool is_duration,
                       trace::Column<int64_t>* ns, trace::Column<float>* s32);
  bool StoreSeconds(size_t field_index, bool is_duration, std::string_view text,
                    double seconds, trace::Column<int64_t>* ns,
                    trace::Column<float>* s32);
  bool ReadOpType(size_t field_index);
  bool ReadExtra(size_t field_index);
  bool ReadFieldText(size_t field_index, std::string* text);
  void FillAbsentColumns();

  Status TokenizerError() const;
  Status FieldCountError() const;
  bool FieldError(size_t field_index, const std::string& what);
  std::string LinePrefix(size_t line) const;

  std::string source_;
  size_t text_bytes_hint_;
  size_t threads_;
  bool general_path_only_ = false;
  bool baseline_fast_path_ = false;
  bool drop_extra_ = false;
  bool drop_dur_ns_ = false;
  // The window-local columns (the keys with KeepKeysInRuns, the
  // microbatches not kept) hold rows [window_base_, ...) only; earlier rows'
  // keys are in table_.key_runs.
  bool keys_in_runs_ = false;
  bool microbatches_with_extra_only_ = false;
  bool drop_microbatches_ = false;  // decided with the header
  size_t window_base_ = 0;
  size_t max_line_bytes_;
  const ops_csv::OpTypeLookup& op_types_;

  // Where the text stands: bytes consumed by earlier windows, the line the
  // next window starts on, and the partial last line carried to the next
  // Feed. When a quoted field runs past the window end, the carry holds its
  // whole record (`record_open_`), which is parsed again only once a quote
  // has come after the last window parsed (`quote_after_window_`).
  size_t offset_ = 0;
  size_t next_line_ = 1;
  std::string carry_;
  bool record_open_ = false;
  bool quote_after_window_ = false;
  Status status_;  // sticky: the first error
  bool refused_ = false;
  bool finished_ = false;
  // Before the header: bytes fed so far, whether the current line holds
  // anything but line breaks, and whether the header line has ended.
  uint64_t fed_bytes_ = 0;
  uint64_t header_line_start_ = 0;
  bool header_line_started_ = false;
  bool header_line_ended_ = false;

  // The window being parsed; its fields are views into the window.
  CsvTokenizer tokenizer_{std::string_view()};
  bool header_done_ = false;
  std::vector<std::string> names_;   // header, one per field
  std::vector<int8_t> roles_;        // per field: a Column, or kExtraField
  std::vector<size_t> extra_index_;  // per field: index in table_.extra
  // ParseRowsParallel's extra values, per part.
  std::vector<std::vector<trace::ExtraColumn>> staged_extra_;
  std::array<bool, ops_csv::kNumColumns> present_{};
  // The first kCanonicalPrefix fields are the first columns of
  // ops_csv::kColumnNames, in order, and more fields follow.
  static constexpr size_t kCanonicalPrefix = 10;
  bool canonical_prefix_ = false;
  size_t rows_ = 0;  // complete rows in table_
  trace::OpsTable table_;
  Status error_;  // left by the bool-returning field readers
};

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_PARSER_H_
