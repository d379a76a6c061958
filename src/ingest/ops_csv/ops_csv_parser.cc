// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_parser.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/check.h"
#include "base/cpu_features.h"
#include "base/parallel_for.h"
#include "ingest/common/decimal_time.h"
#include "ingest/common/huge_pages.h"
#include "trace/op_type.h"

namespace strag::ingest {
namespace {

using ops_csv::Column;
using ops_csv::IntMin;
using ops_csv::Quoted;
using trace::OpType;

// Role of a header field that is not a known column (see `roles_`).
constexpr int8_t kExtraField = -1;
// Every column holds a value per row (an extra one an 8-byte end) and the
// duplicate check is quadratic: a header of thousands of fields is no ops
// trace, so more are refused ("line 1: field 257: more than 256 fields").
constexpr size_t kMaxColumns = 256;

// Lines in `text` (its '\n' bytes): 16 bytes per step with SSE2 (every
// x86-64), the byte counts summed before they can wrap.
size_t CountLines(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  size_t lines = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  while (end - p >= 16) {
    __m128i counts = _mm_setzero_si128();  // per byte lane, < 256
    for (int k = 0; k < 255 && end - p >= 16; ++k, p += 16) {
      const __m128i bytes =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(bytes, newline));
    }
    const __m128i sums = _mm_sad_epu8(counts, _mm_setzero_si128());
    lines += static_cast<size_t>(_mm_cvtsi128_si64(sums)) +
             static_cast<size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  return lines + static_cast<size_t>(std::count(p, end, '\n'));
}

// Length of the complete lines of `text`: up to and including its last
// '\n', or 0.
size_t CompleteLinesSize(std::string_view text) {
  const size_t newline = text.rfind('\n');
  return newline == std::string_view::npos ? 0 : newline + 1;
}

}  // namespace

OpsCsvParser::OpsCsvParser(std::string_view source_name, size_t text_bytes_hint,
                           uint64_t max_line_bytes, size_t threads)
    : source_(source_name),
      text_bytes_hint_(text_bytes_hint),
      threads_(std::max<size_t>(threads, 1)),
      max_line_bytes_(static_cast<size_t>(
          std::clamp<uint64_t>(max_line_bytes, 1, kMaxInputLimitBytes))),
      op_types_(ops_csv::GetOpTypeLookup()) {}

// Pieces are fed at most max_line_bytes_ at a time: a longer line then
// always spans pieces, so it is carried and measured before it is parsed,
// however the text was cut.
Status OpsCsvParser::Feed(std::string_view text) {
  STRAG_CHECK(!finished_, "OpsCsvParser::Feed after Finish");
  while (status_.ok() && !text.empty()) {
    const std::string_view piece = text.substr(0, max_line_bytes_);
    text.remove_prefix(piece.size());
    if (!header_done_) status_ = CheckHeaderBytes(piece);
    if (status_.ok()) status_ = FeedText(piece);
    fed_bytes_ += piece.size();
  }
  return status_;
}

// A NUL byte before the header line ends is binary data (or UTF-16): refused
// at the byte, before the header is parsed (so the same whatever the cut),
// instead of carrying a binary "line" up to the limit. One past the line
// limit is left to the line's own refusal, which then comes first.
Status OpsCsvParser::CheckHeaderBytes(std::string_view text) {
  for (size_t i = 0; i < text.size() && !header_line_ended_; ++i) {
    const char c = text[i];
    if (c == '\0' && fed_bytes_ + i - header_line_start_ < max_line_bytes_) {
      refused_ = true;
      return InvalidInput(source_ + ": byte " + std::to_string(fed_bytes_ + i) +
                          ": a NUL byte in the header line: binary data (or "
                          "UTF-16), not a CSV text");
    }
    if (c == '\n') {
      header_line_ended_ = header_line_started_;
      header_line_start_ = fed_bytes_ + i + 1;
    } else if (c != '\r') {
      header_line_started_ = true;
    }
  }
  return Status::Ok();
}

// Doubling, but never past the limit (past half of it, straight to it): a
// line at the limit costs the limit. A fresh string, because reserve()
// rounds a growth below twice the capacity up to twice.
void OpsCsvParser::AppendCarry(std::string_view text) {
  const size_t needed = carry_.size() + text.size();
  if (needed > carry_.capacity()) {
    const size_t capacity = carry_.capacity();
    std::string grown;
    grown.reserve(std::max(needed, 4 * capacity > max_line_bytes_
                                       ? max_line_bytes_
                                       : 2 * capacity));
    grown.append(carry_);
    carry_.swap(grown);
  }
  carry_.append(text);
}

Status OpsCsvParser::LineTooLong() {
  refused_ = true;
  return InvalidInput(source_ + ": byte " + std::to_string(offset_) +
                      " (line " + std::to_string(next_line_) + "): " +
                      (record_open_ ? "a record (a quoted field with line "
                                      "breaks) longer than "
                                    : "a line longer than ") +
                      LimitText(max_line_bytes_) +
                      " (--max-line-bytes to raise)");
}

// A record whose quoted field is still open is carried whole, from its
// start, but never more than max_line_bytes_ of it: past that, with text
// still to come, it is too long. The text that ends it may open the next
// record, which then starts a carry of its own.
Status OpsCsvParser::FeedOpenRecord(std::string_view text) {
  while (record_open_) {
    const std::string_view part =
        text.substr(0, max_line_bytes_ - carry_.size());
    text.remove_prefix(part.size());
    // The open quoted field can only end at a quote: without one there is
    // no point in parsing the record again (which would be quadratic).
    quote_after_window_ =
        quote_after_window_ || part.find('"') != std::string_view::npos;
    AppendCarry(part);
    if (quote_after_window_) RETURN_IF_ERROR(ParseCarry());
    if (!record_open_) break;
    if (text.empty()) return Status::Ok();
    if (carry_.size() == max_line_bytes_) return LineTooLong();
  }
  return FeedText(text);  // the record ended: the rest as usual
}

// Parses in place all but the partial last line of `text`, so only that
// line (or a record that is still open) is ever copied.
Status OpsCsvParser::FeedText(std::string_view text) {
  if (record_open_) return FeedOpenRecord(text);
  if (!carry_.empty()) {
    // Completes the carried line with the head of `text`.
    const size_t newline = text.find('\n');
    const size_t head =
        newline == std::string_view::npos ? text.size() : newline + 1;
    if (carry_.size() + head > max_line_bytes_) return LineTooLong();
    AppendCarry(text.substr(0, head));
    text.remove_prefix(head);
    if (newline == std::string_view::npos) return Status::Ok();
    RETURN_IF_ERROR(ParseCarry());
    if (record_open_) return FeedText(text);
  }
  const size_t lines = CompleteLinesSize(text);
  ASSIGN_OR_RETURN(const size_t consumed,
                   ParseWindow(text.substr(0, lines), /*final=*/false));
  NoteQuoteAfterWindow(text.substr(lines));
  carry_.assign(text.substr(consumed));
  return Status::Ok();
}

Status OpsCsvParser::ParseCarry() {
  const size_t lines = CompleteLinesSize(carry_);
  ASSIGN_OR_RETURN(const size_t consumed,
                   ParseWindow(std::string_view(carry_).substr(0, lines),
                               /*final=*/false));
  NoteQuoteAfterWindow(std::string_view(carry_).substr(lines));
  carry_.erase(0, consumed);
  return Status::Ok();
}

// `rest` is the text after the window just parsed (its partial last line).
void OpsCsvParser::NoteQuoteAfterWindow(std::string_view rest) {
  quote_after_window_ =
      record_open_ && rest.find('"') != std::string_view::npos;
}

Result<trace::OpsTable> OpsCsvParser::Finish() {
  STRAG_CHECK(!finished_, "OpsCsvParser::Finish called twice");
  finished_ = true;
  RETURN_IF_ERROR(status_);
  ASSIGN_OR_RETURN(const size_t consumed, ParseWindow(carry_, /*final=*/true));
  (void)consumed;
  carry_ = std::string();
  FillAbsentColumns();
  if (drop_extra_) table_.extra.clear();
  table_.keys_in_runs = keys_in_runs_;
  return std::move(table_);
}

// Parses the records of `window`: all of them when `final`; otherwise the
// window ends right after a '\n' and a record can run past it only inside a
// quoted field. Such a record stops the tokenizer with an error that more
// text may undo, so it is rolled back and carried; every other error is
// final, because every decision of the tokenizer before the window end only
// looks at bytes inside the window. Returns the bytes consumed.
Result<size_t> OpsCsvParser::ParseWindow(std::string_view window, bool final) {
  if (window.empty() && !final) return 0;
  tokenizer_ = CsvTokenizer(window, next_line_, /*input_start=*/offset_ == 0);
  Status status = header_done_ ? Status::Ok() : ParseHeader(window, final);
  // The rows of the common shape go through the fast path; the general one
  // takes over at the first other record (and says what is wrong with it).
  size_t base = 0;
  if (status.ok() && header_done_) {
    const size_t at = tokenizer_.position();
    const std::string_view rest = window.substr(at);
    size_t lines = 0;
    const std::string_view body = rest.substr(0, CompleteLinesSize(rest));
    const size_t fast = general_path_only_ ? 0
                        : threads_ > 1 && body.size() >= 2 * kMinPartBytes
                            ? ParseRowsParallel(body, &lines)
                            : ParseRowsFast(body, &lines);
    if (fast > 0) {
      base = at + fast;
      tokenizer_ = CsvTokenizer(window.substr(base), tokenizer_.line() + lines,
                                /*input_start=*/false);
    }
    status = ParseRows();
  }
  size_t consumed = base + tokenizer_.position();
  next_line_ = tokenizer_.line();
  record_open_ = false;
  if (!status.ok()) {
    if (final || !RecordRunsPastWindow()) return status;
    TruncateRows(rows_);
    consumed = base + tokenizer_.record_position();
    next_line_ = tokenizer_.record_line();
    record_open_ = true;
  }
  FoldWindow();
  offset_ += consumed;
  return consumed;
}

// True when the current record has a quoted field that the window end cuts
// off. Re-reads the record (error path only).
bool OpsCsvParser::RecordRunsPastWindow() const {
  CsvTokenizer record(tokenizer_.RestFromRecordStart(),
                      tokenizer_.record_line(), /*input_start=*/false);
  record.CountFields();
  return record.error() && record.error()->input_ended;
}

// Drops what a rolled-back record had already added to the columns.
void OpsCsvParser::TruncateRows(size_t rows) {
  table_.Truncate(rows);
  trace::OpsTable& t = table_;
  const size_t window_rows = rows - window_base_;
  const auto truncate = [window_rows](auto& column) {
    if (column.size() > window_rows) column.resize(window_rows);
  };
  if (keys_in_runs_) {
    truncate(t.rank), truncate(t.dp), truncate(t.pp), truncate(t.step);
  }
  if (drop_microbatches_) truncate(t.microbatch);
}

// Once the window-local columns hold whole rows: with KeepKeysInRuns, the
// keys of rows [window_base_, rows_) go into the runs; the microbatches that
// are not kept go; the columns are emptied (their memory kept for the next
// window's rows).
void OpsCsvParser::FoldWindow() {
  trace::OpsTable& t = table_;
  const size_t keys = rows_ - window_base_;
  if (keys_in_runs_) {
    STRAG_CHECK(t.rank.size() == keys && t.dp.size() == keys &&
                    t.pp.size() == keys && t.step.size() == keys,
                "OpsCsvParser: key columns out of step with the rows");
    for (size_t i = 0; i < keys; ++i) {
      t.key_runs.Append(window_base_ + i + 1, t.rank[i], t.dp[i], t.pp[i],
                        t.step[i]);
    }
    t.rank.clear(), t.dp.clear(), t.pp.clear(), t.step.clear();
  }
  if (drop_microbatches_) t.microbatch.clear();
  if (keys_in_runs_ || drop_microbatches_) window_base_ = rows_;
  // Runs pay where a worker's ops of a step come together; rows in another
  // order (by time, say) make about a run per row, 36 bytes where the
  // columns take 20: then the keys go back to columns for good.
  if (keys_in_runs_ && rows_ >= kKeyRunsTrialRows &&
      t.key_runs.size() > rows_ / 4) {
    t.keys_in_runs = true;  // (set at Finish otherwise)
    t.KeysToColumns();
    keys_in_runs_ = false;  // KeyBase() is 0 from now on
  }
}

std::string OpsCsvParser::LinePrefix(size_t line) const {
  return source_ + ": line " + std::to_string(line) + ": ";
}

Status OpsCsvParser::TokenizerError() const {
  const CsvError& error = *tokenizer_.error();
  const std::string where =
      error.field_index < names_.size()
          ? "column '" + names_[error.field_index] + "': "
          : "field " + std::to_string(error.field_index + 1) + ": ";
  return InvalidInput(LinePrefix(error.line) + where + error.what);
}

// Re-reads the current record with the general tokenizer to count its
// fields (error path only).
Status OpsCsvParser::FieldCountError() const {
  CsvTokenizer record(tokenizer_.RestFromRecordStart());
  return InvalidInput(LinePrefix(tokenizer_.record_line()) + "expected " +
                      std::to_string(names_.size()) +
                      " fields as in the header, found " +
                      std::to_string(record.CountFields()));
}

bool OpsCsvParser::FieldError(size_t field_index, const std::string& what) {
  error_ = InvalidInput(LinePrefix(tokenizer_.record_line()) + "column '" +
                        names_[field_index] + "': " + what);
  return false;
}

// Reads the header once it is in the window; blank lines before it are
// skipped, so a window of blank lines only leaves the header for later.
Status OpsCsvParser::ParseHeader(std::string_view window, bool final) {
  std::vector<CsvField> fields;
  if (!tokenizer_.Next(&fields, kMaxColumns)) {
    if (tokenizer_.error()) return TokenizerError();
    if (!final) return Status::Ok();
    return InvalidInput(source_ + ": empty file (expected a header line)");
  }
  RETURN_IF_ERROR(SetColumns(fields));
  RETURN_IF_ERROR(CheckRequiredColumns());
  header_done_ = true;
  // The published column order (and the writer's): the first fields get
  // the fast path without a dispatch per field.
  canonical_prefix_ = names_.size() > kCanonicalPrefix;
  for (size_t i = 0; i < kCanonicalPrefix && canonical_prefix_; ++i) {
    canonical_prefix_ = roles_[i] == static_cast<int8_t>(i);
  }
  // The microbatches are read with extra columns only (the sequence
  // lengths).
  drop_microbatches_ = microbatches_with_extra_only_ && table_.extra.empty() &&
                       present_[static_cast<size_t>(Column::kMicrobatch)];
  ReserveRows(window);
  return Status::Ok();
}

Status OpsCsvParser::SetColumns(const std::vector<CsvField>& fields) {
  for (const CsvField& field : fields) {
    std::string name = field.Value();
    // A bare CR inside the header: the file ends its lines with CR only
    // (classic Mac), so the whole file reads as one line.
    if (const size_t cr = name.find('\r');
        cr != std::string::npos &&
        (cr + 1 == name.size() || name[cr + 1] != '\n')) {
      return InvalidInput(LinePrefix(1) +
                          "lines end with CR only; the ops CSV needs LF or "
                          "CRLF line endings (convert with: tr '\\r' '\\n')");
    }
    if (std::find(names_.begin(), names_.end(), name) != names_.end()) {
      return InvalidInput(LinePrefix(1) + "duplicate column '" + name + "'");
    }
    const auto known = std::find(ops_csv::kColumnNames.begin(),
                                 ops_csv::kColumnNames.end(), name);
    if (known == ops_csv::kColumnNames.end()) {
      roles_.push_back(kExtraField);
      extra_index_.push_back(table_.extra.size());
      table_.extra.emplace_back(name);
    } else {
      const auto column = known - ops_csv::kColumnNames.begin();
      roles_.push_back(static_cast<int8_t>(column));
      extra_index_.push_back(0);
      present_[static_cast<size_t>(column)] = true;
    }
    names_.push_back(std::move(name));
  }
  return Status::Ok();
}

Status OpsCsvParser::CheckRequiredColumns() const {
  for (size_t c = 0; c < ops_csv::kNumRequiredColumns; ++c) {
    if (present_[c]) continue;
    std::string header;
    for (const std::string& name : names_) {
      if (!header.empty()) header += ", ";
      header += "'" + name + "'";
    }
    return InvalidInput(source_ + ": missing required column '" +
                        std::string(ops_csv::kColumnNames[c]) +
                        "' (header has: " + header + ")");
  }
  return Status::Ok();
}

// Guesses the row count from the size hint and the line density of the
// first 64 KiB after the header, so the columns are allocated once (a few
// percent of slack) instead of doubling, which would copy them and, for a
// while, hold both copies; large columns get huge pages. Without a hint the
// columns grow geometrically.
void OpsCsvParser::ReserveRows(std::string_view window) {
  const size_t header_end = offset_ + tokenizer_.position();
  if (text_bytes_hint_ <= header_end) return;
  const size_t body = text_bytes_hint_ - header_end;
  const std::string_view sample =
      window.substr(tokenizer_.position(), 64 * 1024);
  const auto lines =
      static_cast<size_t>(std::count(sample.begin(), sample.end(), '\n'));
  size_t rows = 16;
  if (lines > 0) {
    rows += static_cast<size_t>(static_cast<double>(body) /
                                static_cast<double>(sample.size()) *
                                static_cast<double>(lines) * 1.02);
  }
  // The guess comes from the text (a gzip trailer, the first lines), so it
  // may be more than the address space allows: then the columns just grow.
  bool reserved = true;
  const auto reserve = [rows, &reserved](auto& column) {
    ReserveColumn(rows, &reserved, &column);
  };
  trace::OpsTable& t = table_;
  if (!keys_in_runs_) {  // else they hold a window's rows only
    reserve(t.rank);
    reserve(t.dp);
    reserve(t.pp);
    reserve(t.step);
  }
  reserve(t.op_type);
  reserve(t.seq_id);
  reserve(t.chunk);
  if (!drop_microbatches_) reserve(t.microbatch);
  reserve(t.global_chunk);
  reserve(t.start_ns);
  if (!drop_dur_ns_) reserve(t.dur_ns);
  reserve(t.start_s32);
  reserve(t.dur_s32);
  reserve(t.start_rem_as);
  if (present_[static_cast<size_t>(Column::kTp)]) reserve(t.tp);
  if (present_[static_cast<size_t>(Column::kCp)]) reserve(t.cp);
  if (present_[static_cast<size_t>(Column::kTokens)]) reserve(t.tokens);
  // Only the ends: the text grows as the values come.
  for (trace::ExtraColumn& extra : t.extra) reserve(extra);
  if (!reserved) {  // gives back what was reserved (no row is in yet)
    std::vector<trace::ExtraColumn> extra = std::move(t.extra);
    t = trace::OpsTable();
    for (trace::ExtraColumn& e : extra) t.extra.emplace_back(std::move(e.name));
  }
}

// Converts the records in place: numbers are parsed where they lie in the
// window (std::from_chars from the tokenizer's cursor), so each byte of a
// numeric field is read once and nothing is copied; anything unusual (a
// quoted or malformed field) takes the general path through
// CsvTokenizer::ReadField, which also builds the error messages. The
// bool-returning field readers leave their error in `error_`.
Status OpsCsvParser::ParseRows() {
  const size_t last = names_.size() - 1;
  while (tokenizer_.BeginRecord()) {
    for (size_t i = 0; i <= last; ++i) {
      if (!ParseField(i)) return error_;
      const CsvDelimiter delimiter = tokenizer_.ConsumeDelimiter();
      const bool expected = i < last ? delimiter == CsvDelimiter::kComma
                                     : delimiter == CsvDelimiter::kRecordEnd;
      if (!expected) return FieldCountError();
    }
    ++rows_;
  }
  if (tokenizer_.error()) return TokenizerError();
  return Status::Ok();
}

namespace {

// The end of an unquoted field's text at `p`: the next ',', '\n' or '\r';
// nullptr when a quote comes first (the general path decides about it).
// `p` points into complete lines ending before `end`, so a '\n' ends the
// scan; 16 bytes at a time with SSE2 while they lie before `end`.
const char* ScanFieldText(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i comma = _mm_set1_epi8(','), newline = _mm_set1_epi8('\n'),
                cr = _mm_set1_epi8('\r'), quote = _mm_set1_epi8('"');
  while (end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(bytes, comma),
                     _mm_cmpeq_epi8(bytes, newline)),
        _mm_or_si128(_mm_cmpeq_epi8(bytes, cr), _mm_cmpeq_epi8(bytes, quote)));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask != 0) {
      const char* at = p + std::countr_zero(mask);
      return *at == '"' ? nullptr : at;
    }
    p += 16;
  }
#else
  (void)end;
#endif
  while (true) {
    const char c = *p;
    if (c == ',' || c == '\n' || c == '\r') return p;
    if (c == '"') return nullptr;
    ++p;
  }
}

}  // namespace

// Makes room for rows [rows_, rows_ + more) in every column the rows fill
// (uninitialised: trace::Column; the parse writes them), so that parts of a
// piece can be parsed straight into their rows on several threads, which
// also touch the new pages first.
void OpsCsvParser::GrowRows(size_t more) {
  const size_t n = rows_ + more;
  trace::OpsTable& t = table_;
  const auto grow = [n](auto& column) { column.resize(n); };
  const size_t keys = n - KeyBase();
  t.rank.resize(keys), t.dp.resize(keys), t.pp.resize(keys);
  t.step.resize(keys);
  grow(t.op_type);
  grow(t.seq_id);
  grow(t.start_ns);
  grow(t.start_rem_as);
  grow(t.start_s32);
  if (!drop_dur_ns_) grow(t.dur_ns);
  grow(t.dur_s32);
  const auto has = [this](Column c) { return present_[static_cast<size_t>(c)]; };
  if (has(Column::kChunk)) grow(t.chunk);
  if (has(Column::kMicrobatch)) t.microbatch.resize(n - MicrobatchBase());
  if (has(Column::kGlobalChunk)) grow(t.global_chunk);
  if (has(Column::kTp)) grow(t.tp);
  if (has(Column::kCp)) grow(t.cp);
  if (has(Column::kTokens)) grow(t.tokens);
}

// The fast path of ParseRows, for `lines` (complete lines): rows of unquoted
// fields, plain decimal numbers, known op types and LF or CRLF ends, parsed
// straight into the columns with every field read once. It stops at the
// start of the first record of another shape (a blank line, a quote, an
// empty or malformed number, a value out of range...), and returns the
// bytes it took and their number of lines, for the general path to go on
// from there. Every record it takes gives exactly the values ParseRows
// would give (same conversions, same checks); anything it is unsure of is
// left to ParseRows.
size_t OpsCsvParser::ParseRowsFast(std::string_view lines, size_t* count) {
  *count = 0;
  if (lines.empty()) return 0;
  GrowRows(CountLines(lines));
  const size_t taken =
      ParseRowsAt(lines, rows_, count, drop_extra_ ? nullptr : &table_.extra);
  rows_ += *count;
  TruncateRows(rows_);
  return taken;
}

// The fast path's rows of `lines` written to rows [at, at + *count) of the
// table, which has room for one row per line, and their extra columns'
// values appended to `*extra` (null: not kept): reads only the header's
// roles and writes only those rows, so threads may parse disjoint parts at
// once, each into extra columns of its own. Rows past *count (of a record
// it stopped at) may be written too, and one more value appended; the
// caller truncates.
size_t OpsCsvParser::ParseRowsAt(std::string_view lines, size_t at,
                                 size_t* count,
                                 std::vector<trace::ExtraColumn>* extra) {
#if STRAG_AVX2_CLONES
  if (CpuHasAvx2Bmi() && !baseline_fast_path_) {
    return ParseRowsAtAvx2Bmi(lines, at, count, extra);
  }
#endif
  return ParseRowsAtBody(lines, at, count, extra);
}

#if STRAG_AVX2_CLONES
// The same compiled for AVX2 with BMI1 / BMI2 (base/cpu_features.h; shifts
// and bit scans of the digit runs without flags): the same conversions and
// no FMA to contract, so the same rows. One-thread parse of trace-AR 12.3
// -> 10.8 ms (OpsCsvFastRowsTest compares both with the general path).
STRAG_AVX2_BMI_FLATTEN size_t OpsCsvParser::ParseRowsAtAvx2Bmi(
    std::string_view lines, size_t at, size_t* count,
    std::vector<trace::ExtraColumn>* extra) {
  return ParseRowsAtBody(lines, at, count, extra);
}
#endif

inline size_t OpsCsvParser::ParseRowsAtBody(
    std::string_view lines, size_t at, size_t* count,
    std::vector<trace::ExtraColumn>* extra) {
  const size_t last = names_.size() - 1;
  const char* const begin = lines.data();
  const char* const end = begin + lines.size();
  const char* record = begin;
  size_t row = at;
  while (record != end) {
    const char* p = record;
    bool ok = true;
    size_t i = 0;
    if (canonical_prefix_) {
      ok = FastPrefix(&p, end, row,
                      std::make_index_sequence<kCanonicalPrefix>());
      i = kCanonicalPrefix;
    }
    for (; ok && i <= last; ++i) {
      const int8_t role = roles_[i];
      if (role == kExtraField) {
        const char* field_end = ScanFieldText(p, end);
        if (field_end == nullptr) {
          ok = false;
          break;
        }
        if (extra != nullptr) {
          (*extra)[extra_index_[i]].push_back(
              std::string_view(p, static_cast<size_t>(field_end - p)));
        }
        p = field_end;
      } else {
        p = FastField(static_cast<Column>(role), p, end, row);
        ok = p != nullptr;
      }
      if (!ok) break;
      // The delimiter: ',' between fields, LF or CRLF after the last.
      if (i < last) {
        ok = *p == ',';
        ++p;
      } else if (*p == '\n') {
        ++p;
      } else {
        ok = p[0] == '\r' && p + 1 != end && p[1] == '\n';
        p += 2;
      }
    }
    if (!ok) break;
    ++row;
    record = p;
  }
  // Counted here, not per row: the parts' counts share a cache line, and
  // an increment per row through `count` bounced it between the threads
  // (80% of this loop's time with two threads).
  *count = row - at;
  return static_cast<size_t>(record - begin);
}

// One field of the fast path, of column C, into row `row`; the end of its
// text, or nullptr (the general path decides).
template <Column C>
const char* OpsCsvParser::FastFieldOf(const char* p, const char* end,
                                      size_t row) {
  trace::OpsTable& t = table_;
  // The rows of the columns that may be window-local (FoldWindow).
  [[maybe_unused]] const size_t key_row = row - KeyBase();
  [[maybe_unused]] const size_t mb_row = row - MicrobatchBase();
  if constexpr (C == Column::kDp) {
    return FastInt(p, IntMin::kNonNegative, &t.dp[key_row]);
  } else if constexpr (C == Column::kPp) {
    return FastInt(p, IntMin::kNonNegative, &t.pp[key_row]);
  } else if constexpr (C == Column::kRank) {
    return FastInt(p, IntMin::kNonNegative, &t.rank[key_row]);
  } else if constexpr (C == Column::kStep) {
    return FastInt(p, IntMin::kAny, &t.step[key_row]);
  } else if constexpr (C == Column::kSeqId) {
    return FastInt(p, IntMin::kNonNegative, &t.seq_id[row]);
  } else if constexpr (C == Column::kChunk) {
    return FastInt(p, IntMin::kMinusOne, &t.chunk[row]);
  } else if constexpr (C == Column::kMicrobatch) {
    return FastInt(p, IntMin::kMinusOne, &t.microbatch[mb_row]);
  } else if constexpr (C == Column::kGlobalChunk) {
    return FastInt(p, IntMin::kMinusOne, &t.global_chunk[row]);
  } else if constexpr (C == Column::kTp) {
    return FastInt(p, IntMin::kNonNegative, &t.tp[row]);
  } else if constexpr (C == Column::kCp) {
    return FastInt(p, IntMin::kNonNegative, &t.cp[row]);
  } else if constexpr (C == Column::kTokens) {
    return FastInt(p, IntMin::kNonNegative, &t.tokens[row]);
  } else if constexpr (C == Column::kOpType) {
    const char* field_end = nullptr;
    if (const std::optional<OpType> type =
            op_types_.FindInBlock(p, end, &field_end)) {
      t.op_type[row] = *type;
      return field_end;
    }
    field_end = ScanFieldText(p, end);
    if (field_end == nullptr) return nullptr;
    const std::optional<OpType> type = op_types_.Find(
        std::string_view(p, static_cast<size_t>(field_end - p)));
    if (!type) return nullptr;
    t.op_type[row] = *type;
    return field_end;
  } else if constexpr (C == Column::kStart) {
    return FastSeconds(p, end, /*is_duration=*/false, row);
  } else {
    static_assert(C == Column::kDur);
    return FastSeconds(p, end, /*is_duration=*/true, row);
  }
}

// FastFieldOf for a column known at run time: a table of its instances,
// one per column, in Column order.
template <size_t... I>
constexpr auto OpsCsvParser::FastFieldTable(std::index_sequence<I...>) {
  return std::array<FieldReader, sizeof...(I)>{
      &OpsCsvParser::FastFieldOf<static_cast<Column>(I)>...};
}

const char* OpsCsvParser::FastField(Column c, const char* p, const char* end,
                                    size_t row) {
  static constexpr auto kReaders =
      FastFieldTable(std::make_index_sequence<ops_csv::kNumColumns>());
  return (this->*kReaders[static_cast<size_t>(c)])(p, end, row);
}

// The first kCanonicalPrefix fields of a record in the published column
// order, each with its ',', one after the other without a dispatch per
// field (an indirect jump each, ~12% of the row loop); false where a field
// would leave the fast path.
template <size_t... I>
bool OpsCsvParser::FastPrefix(const char** p, const char* end, size_t row,
                              std::index_sequence<I...> /*columns*/) {
  const auto field = [&](auto column) {
    const char* next = FastFieldOf<decltype(column)::value>(*p, end, row);
    if (next == nullptr || *next != ',') return false;
    *p = next + 1;
    return true;
  };
  return (field(std::integral_constant<Column, static_cast<Column>(I)>()) &&
          ...);
}

// ParseRowsFast on every core: `lines` is cut at line ends into parts of
// at least kMinPartBytes, up to kPartsPerThread per thread, each parsed
// straight into its rows of the table (their offsets from the parts' line
// counts). Several parts per thread, handed out as threads come free,
// keep both busy when one is slowed (by the inflating thread sharing its
// core): with one part each, the other waited at the end of every piece.
// The result is ParseRowsFast's: the parts are taken in order up to the
// first that stops early (its rows up to there), and the general path
// goes on from that point.
size_t OpsCsvParser::ParseRowsParallel(std::string_view lines, size_t* count) {
  const size_t want =
      std::min(kPartsPerThread * threads_, lines.size() / kMinPartBytes);
  std::vector<std::string_view> parts;
  size_t from = 0;
  for (size_t k = 1; k < want; ++k) {
    const size_t newline = lines.find('\n', lines.size() * k / want);
    const size_t cut =
        newline == std::string_view::npos ? lines.size() : newline + 1;
    if (cut <= from || cut == lines.size()) continue;
    parts.push_back(lines.substr(from, cut - from));
    from = cut;
  }
  parts.push_back(lines.substr(from));
  std::vector<size_t> first_row(parts.size() + 1, rows_);
  for (size_t k = 0; k < parts.size(); ++k) {
    first_row[k + 1] = first_row[k] + CountLines(parts[k]);
  }
  GrowRows(first_row.back() - rows_);
  std::vector<size_t> taken(parts.size()), counts(parts.size());
  // Each part's extra values go to columns of its own (their memory kept
  // from window to window), appended to the table's in order below.
  staged_extra_.resize(std::max(staged_extra_.size(), parts.size()));
  for (size_t k = 0; k < parts.size(); ++k) {
    staged_extra_[k].resize(table_.extra.size());
    for (trace::ExtraColumn& e : staged_extra_[k]) e.clear();
  }
  const size_t workers = std::min(threads_, parts.size());
  ParallelFor(parts.size(), workers, [&](size_t k, size_t /*worker*/) {
    taken[k] = ParseRowsAt(parts[k], first_row[k], &counts[k],
                           drop_extra_ ? nullptr : &staged_extra_[k]);
  });
  // Parts are taken in order up to the first that stopped early (its rows
  // up to there included); every later part's rows are dropped.
  size_t total = 0;
  *count = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    total += taken[k];
    *count += counts[k];
    if (!drop_extra_) {
      for (size_t e = 0; e < table_.extra.size(); ++e) {
        table_.extra[e].Append(staged_extra_[k][e], 0, counts[k]);
      }
    }
    if (taken[k] != parts[k].size()) break;
  }
  rows_ += *count;
  TruncateRows(rows_);
  return total;
}

// Empties the table, keeping each column's capacity.
void OpsCsvParser::ClearRows() {
  table_.ClearRows();
  rows_ = 0;
}

// An integer field of the fast path: the same conversion and checks as
// ReadInt and StoreInt; nullptr (nothing stored) when they would fail or
// take the general path.
template <typename T>
const char* OpsCsvParser::FastInt(const char* p, IntMin min, T* out) {
  // ops_csv::ParseDecimal's rules (at most 18 digits, fits T), without its
  // per-digit bound checks: the line's '\n' ends the digits.
  const bool negative = *p == '-';
  if (negative) ++p;
  const char* const digits = p;
  uint64_t magnitude = 0;
  while (static_cast<unsigned>(*p - '0') < 10) {
    magnitude = magnitude * 10 + static_cast<unsigned>(*p - '0');
    ++p;
  }
  const auto count = p - digits;
  if (count == 0 || count > 18) return nullptr;
  // The largest magnitude taken: -0 is 0 (allowed everywhere), -1 only
  // where it means "none".
  const auto max = static_cast<uint64_t>(std::numeric_limits<T>::max());
  const uint64_t limit = !negative                ? max
                         : min == IntMin::kAny      ? max + 1
                         : min == IntMin::kMinusOne ? 1
                                                    : 0;
  if (magnitude > limit) return nullptr;
  const auto value = static_cast<int64_t>(magnitude);
  *out = static_cast<T>(negative ? -value : value);
  return p;
}

// A time field of the fast path (seconds, a plain decimal): the values
// ReadSeconds and StoreSeconds would store, into row `row`, the digits
// scanned once; nullptr when they would fail or take the general path.
const char* OpsCsvParser::FastSeconds(const char* p, const char* end,
                                      bool is_duration, size_t row) {
  ops_csv::PlainDecimal d;
  const char* const next = ops_csv::ScanPlainDecimal(p, end, &d);
  if (next == nullptr) return nullptr;
  const double seconds = ops_csv::PlainDecimalToDouble(d, p, next);
  if (std::fabs(seconds) > ops_csv::kMaxAbsSeconds) return nullptr;
  trace::OpsTable& t = table_;
  if (is_duration) {
    if (seconds < 0) return nullptr;
    if (!drop_dur_ns_) t.dur_ns[row] = ops_csv::SecondsToNs(seconds);
    t.dur_s32[row] = static_cast<float>(seconds);
  } else {
    const std::optional<trace::ExactTime> exact =
        PlainDecimalSecondsToExactTime(d.negative, d.mantissa, d.fraction);
    if (!exact) return nullptr;
    t.start_ns[row] = exact->ns;
    t.start_rem_as[row] = exact->rem_as;
    t.start_s32[row] = static_cast<float>(seconds);
  }
  return next;
}

bool OpsCsvParser::ParseField(size_t i) {
  if (roles_[i] == kExtraField) return ReadExtra(i);
  switch (static_cast<Column>(roles_[i])) {
    case Column::kDp:
      return ReadInt(i, IntMin::kNonNegative, &table_.dp);
    case Column::kPp:
      return ReadInt(i, IntMin::kNonNegative, &table_.pp);
    case Column::kRank:
      return ReadInt(i, IntMin::kNonNegative, &table_.rank);
    case Column::kStep:
      return ReadInt(i, IntMin::kAny, &table_.step);
    case Column::kOpType:
      return ReadOpType(i);
    case Column::kStart:
      return ReadSeconds(i, /*is_duration=*/false, &table_.start_ns,
                         &table_.start_s32);
    case Column::kDur:
      return ReadSeconds(i, /*is_duration=*/true, &table_.dur_ns,
                         &table_.dur_s32);
    case Column::kSeqId:
      return ReadInt(i, IntMin::kNonNegative, &table_.seq_id);
    case Column::kChunk:
      return ReadInt(i, IntMin::kMinusOne, &table_.chunk);
    case Column::kMicrobatch:
      return ReadInt(i, IntMin::kMinusOne, &table_.microbatch);
    case Column::kGlobalChunk:
      return ReadInt(i, IntMin::kMinusOne, &table_.global_chunk);
    case Column::kTp:
      return ReadInt(i, IntMin::kNonNegative, &table_.tp);
    case Column::kCp:
      return ReadInt(i, IntMin::kNonNegative, &table_.cp);
    case Column::kTokens:
      return ReadInt(i, IntMin::kNonNegative, &table_.tokens);
  }
  return FieldError(i, "internal error: unhandled column");  // unreachable
}

// The whole field as text (unquoted); the general path.
bool OpsCsvParser::ReadFieldText(size_t i, std::string* text) {
  CsvField field;
  if (!tokenizer_.ReadField(i, &field)) {
    error_ = TokenizerError();
    return false;
  }
  *text = field.Value();
  return true;
}

template <typename T>
bool OpsCsvParser::ReadInt(size_t i, IntMin min, trace::Column<T>* column) {
  const char* begin = tokenizer_.cursor();
  T value{};
  const char* ptr = ops_csv::ParseDecimal(begin, tokenizer_.end(), &value);
  if (ptr == nullptr || !tokenizer_.IsFieldEnd(ptr)) {
    return ReadIntSlow(i, min, column);
  }
  tokenizer_.Advance(ptr);
  return StoreInt(i, min,
                  std::string_view(begin, static_cast<size_t>(ptr - begin)),
                  value, column);
}

template <typename T>
bool OpsCsvParser::ReadIntSlow(size_t i, IntMin min, trace::Column<T>* column) {
  std::string text;
  if (!ReadFieldText(i, &text)) return false;
  if (text.empty() && min == IntMin::kMinusOne) {  // an empty mc means none
    column->push_back(-1);
    return true;
  }
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return FieldError(i, Quoted(text) + " is out of range (at most " +
                             std::to_string(std::numeric_limits<T>::max()) +
                             ")");
  }
  if (ec != std::errc() || ptr != end) {
    return FieldError(i, Quoted(text) + " is not an integer");
  }
  return StoreInt(i, min, text, value, column);
}

template <typename T>
bool OpsCsvParser::StoreInt(size_t i, IntMin min, std::string_view text,
                            T value, trace::Column<T>* column) {
  if (min == IntMin::kNonNegative && value < 0) {
    return FieldError(i, std::string(text) + " is negative");
  }
  if (min == IntMin::kMinusOne && value < -1) {
    return FieldError(
        i, std::string(text) + " is invalid (expected -1 for none, or >= 0)");
  }
  column->push_back(value);
  return true;
}

bool OpsCsvParser::ReadSeconds(size_t i, bool is_duration,
                               trace::Column<int64_t>* ns,
                               trace::Column<float>* s32) {
  const char* begin = tokenizer_.cursor();
  double seconds = 0;
  const auto [ptr, ec] = std::from_chars(begin, tokenizer_.end(), seconds);
  if (ec != std::errc() || !tokenizer_.IsFieldEnd(ptr)) {
    return ReadSecondsSlow(i, is_duration, ns, s32);
  }
  tokenizer_.Advance(ptr);
  return StoreSeconds(i, is_duration,
                      std::string_view(begin, static_cast<size_t>(ptr - begin)),
                      seconds, ns, s32);
}

bool OpsCsvParser::ReadSecondsSlow(size_t i, bool is_duration,
                                   trace::Column<int64_t>* ns,
                                   trace::Column<float>* s32) {
  std::string text;
  if (!ReadFieldText(i, &text)) return false;
  double seconds = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, seconds);
  if (ec == std::errc::result_out_of_range) {
    return FieldError(i, Quoted(text) + " is out of range");
  }
  if (ec != std::errc() || ptr != end) {
    return FieldError(i, Quoted(text) + " is not a number");
  }
  return StoreSeconds(i, is_duration, text, seconds, ns, s32);
}

bool OpsCsvParser::StoreSeconds(size_t i, bool is_duration,
                                std::string_view text, double seconds,
                                trace::Column<int64_t>* ns,
                                trace::Column<float>* s32) {
  if (!std::isfinite(seconds)) {
    return FieldError(i, Quoted(text) + " is not a finite number");
  }
  if (is_duration && seconds < 0) {
    return FieldError(i, std::string(text) + " is negative");
  }
  if (std::fabs(seconds) > ops_csv::kMaxAbsSeconds) {
    return FieldError(
        i, std::string(text) + " is out of range (more than 9.2e9 seconds)");
  }
  if (is_duration) {
    if (!drop_dur_ns_) ns->push_back(ops_csv::SecondsToNs(seconds));
  } else {
    // Starts exactly from the digits: a binary64 of an epoch in seconds is
    // 0.24 us coarse, and the per-step rebase needs every digit.
    const std::optional<trace::ExactTime> exact =
        DecimalTextToExactTime(text, 9);
    if (!exact) return FieldError(i, Quoted(text) + " is not a number");
    ns->push_back(exact->ns);
    table_.start_rem_as.push_back(exact->rem_as);
  }
  s32->push_back(static_cast<float>(seconds));
  return true;
}

bool OpsCsvParser::ReadOpType(size_t i) {
  CsvField field;
  if (!tokenizer_.ReadField(i, &field)) {
    error_ = TokenizerError();
    return false;
  }
  const std::optional<OpType> type = op_types_.Find(field.text);
  if (!type) {
    return FieldError(i, "unknown op type " + Quoted(field.Value()) +
                             " (expected one of " + ops_csv::ExpectedOpTypes() +
                             ")");
  }
  table_.op_type.push_back(*type);
  return true;
}

bool OpsCsvParser::ReadExtra(size_t i) {
  std::string text;
  if (!ReadFieldText(i, &text)) return false;
  if (!drop_extra_) {
    table_.extra[extra_index_[i]].push_back(text);
  }
  return true;
}

void OpsCsvParser::TakeRows(trace::OpsTable* rows) {
  STRAG_CHECK(!keys_in_runs_ && !microbatches_with_extra_only_,
              "OpsCsvParser::TakeRows with window-local columns");
  FillAbsentColumns();
  std::swap(*rows, table_);
  // The caller's last batch becomes the next one's columns.
  table_.extra.clear();
  for (const trace::ExtraColumn& extra : rows->extra) {
    table_.extra.emplace_back(extra.name);
  }
  ClearRows();
  if (drop_extra_) rows->extra.clear();
}

// mc, mb_id and gmc are columns of every table; -1 says "not recorded".
void OpsCsvParser::FillAbsentColumns() {
  const size_t rows = table_.op_type.size();
  if (!present_[static_cast<size_t>(Column::kChunk)]) {
    table_.chunk.assign(rows, -1);
  }
  if (!present_[static_cast<size_t>(Column::kMicrobatch)] &&
      (!microbatches_with_extra_only_ || !table_.extra.empty())) {
    table_.microbatch.assign(rows, -1);
  }
  if (!present_[static_cast<size_t>(Column::kGlobalChunk)]) {
    table_.global_chunk.assign(rows, -1);
  }
}

}  // namespace strag::ingest
