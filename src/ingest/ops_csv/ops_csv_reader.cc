// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_reader.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "ingest/ops_csv/csv_tokenizer.h"
#include "ingest/ops_csv/ops_csv_schema.h"
#include "trace/op_type.h"

namespace strag::ingest {
namespace {

using ops_csv::Column;
using trace::OpType;

// Role of a header field that is not a known column (see `roles_`).
constexpr int8_t kExtraField = -1;

// Finds an op type by name with at most a couple of comparisons: names are
// bucketed by length (a bit mask of candidate types per length).
class OpTypeLookup {
 public:
  OpTypeLookup() {
    static_assert(trace::kNumOpTypes <= 32);
    for (int i = 0; i < trace::kNumOpTypes; ++i) {
      names_[static_cast<size_t>(i)] =
          trace::OpTypeName(static_cast<OpType>(i));
      const size_t length = names_[static_cast<size_t>(i)].size();
      if (length < masks_.size()) masks_[length] |= uint32_t{1} << i;
    }
  }

  std::optional<OpType> Find(std::string_view name) const {
    if (name.size() >= masks_.size()) return std::nullopt;
    for (uint32_t m = masks_[name.size()]; m != 0; m &= m - 1) {
      const int i = std::countr_zero(m);
      if (names_[static_cast<size_t>(i)] == name) return static_cast<OpType>(i);
    }
    return std::nullopt;
  }

 private:
  std::array<std::string_view, trace::kNumOpTypes> names_{};
  std::array<uint32_t, 40> masks_{};
};

const OpTypeLookup& GetOpTypeLookup() {
  static const OpTypeLookup lookup;
  return lookup;
}

std::string ExpectedOpTypes() {
  std::string list;
  for (int i = 0; i < trace::kNumOpTypes; ++i) {
    if (i > 0) list += ", ";
    list += trace::OpTypeName(static_cast<OpType>(i));
  }
  return list;
}

// `text` in double quotes, shortened so that one bad field cannot flood the
// message.
std::string Quoted(std::string_view text) {
  constexpr size_t kMaxShown = 60;
  // Built with append(): GCC 12 warns falsely (-Wrestrict) on "\"" + string.
  std::string quoted;
  quoted.reserve(kMaxShown + 5);
  quoted.push_back('"');
  quoted.append(text.substr(0, kMaxShown));
  if (text.size() > kMaxShown) quoted.append("...");
  quoted.push_back('"');
  return quoted;
}

// Parses `[-]digits` at `p` as T and returns the end of the digits, or
// nullptr when there is no number, more than 18 digits, or a value that does
// not fit T; then the caller's slow path (std::from_chars on the whole
// field) decides. Accepts exactly what std::from_chars accepts, only faster
// because it is inlined.
template <typename T>
const char* ParseDecimal(const char* p, const char* end, T* out) {
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  const char* digits = p;
  uint64_t magnitude = 0;
  while (p != end && static_cast<unsigned char>(*p - '0') < 10) {
    if (p - digits == 18) return nullptr;
    magnitude = magnitude * 10 + static_cast<uint64_t>(*p - '0');
    ++p;
  }
  if (p == digits) return nullptr;
  const uint64_t limit =
      static_cast<uint64_t>(std::numeric_limits<T>::max()) + (negative ? 1 : 0);
  if (magnitude > limit) return nullptr;
  const auto value = static_cast<int64_t>(magnitude);
  *out = static_cast<T>(negative ? -value : value);
  return p;
}

// Smallest accepted value of an integer column.
enum class IntMin : uint8_t {
  kAny,          // step ids may be any integer
  kNonNegative,  // ranks, seq_id, tokens
  kMinusOne,     // mc, mb_id, gmc: -1 means "none"
};

// Converts the ops CSV in one pass. Numbers are parsed where they lie in the
// input (std::from_chars from the tokenizer's cursor), so each byte of a
// numeric field is read once and nothing is copied; anything unusual (a
// quoted or malformed field) takes the general path through
// CsvTokenizer::ReadField, which also builds the error messages. The
// bool-returning functions leave their error in `error_`.
class OpsCsvParser {
 public:
  OpsCsvParser(std::string_view csv, std::string_view source_name)
      : csv_(csv), tokenizer_(csv), source_(source_name) {}

  Result<trace::OpsTable> Parse() &&;

 private:
  Status ReadHeader();
  Status CheckRequiredColumns() const;
  void ReserveRows();
  Status ParseRows();
  bool ParseField(size_t field_index);
  template <typename T>
  bool ReadInt(size_t field_index, IntMin min, std::vector<T>* column);
  template <typename T>
  bool ReadIntSlow(size_t field_index, IntMin min, std::vector<T>* column);
  template <typename T>
  bool StoreInt(size_t field_index, IntMin min, std::string_view text, T value,
                std::vector<T>* column);
  bool ReadSeconds(size_t field_index, bool is_duration,
                   std::vector<int64_t>* ns, std::vector<float>* s32);
  bool ReadSecondsSlow(size_t field_index, bool is_duration,
                       std::vector<int64_t>* ns, std::vector<float>* s32);
  bool StoreSeconds(size_t field_index, bool is_duration, std::string_view text,
                    double seconds, std::vector<int64_t>* ns,
                    std::vector<float>* s32);
  bool ReadOpType(size_t field_index);
  bool ReadExtra(size_t field_index);
  bool ReadFieldText(size_t field_index, std::string* text);
  void FillAbsentColumns();

  Status TokenizerError() const;
  Status FieldCountError() const;
  bool FieldError(size_t field_index, const std::string& what);
  std::string LinePrefix(size_t line) const;

  std::string_view csv_;
  CsvTokenizer tokenizer_;
  std::string_view source_;
  const OpTypeLookup& op_types_ = GetOpTypeLookup();

  std::vector<std::string> names_;   // header, one per field
  std::vector<int8_t> roles_;        // per field: a Column, or kExtraField
  std::vector<size_t> extra_index_;  // per field: index in table_.extra
  std::array<bool, ops_csv::kNumColumns> present_{};
  trace::OpsTable table_;
  Status error_;
};

Result<trace::OpsTable> OpsCsvParser::Parse() && {
  RETURN_IF_ERROR(ReadHeader());
  RETURN_IF_ERROR(CheckRequiredColumns());
  ReserveRows();
  RETURN_IF_ERROR(ParseRows());
  FillAbsentColumns();
  return std::move(table_);
}

std::string OpsCsvParser::LinePrefix(size_t line) const {
  return std::string(source_) + ": line " + std::to_string(line) + ": ";
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
  std::vector<CsvField> fields;
  record.Next(&fields);
  return InvalidInput(LinePrefix(tokenizer_.record_line()) + "expected " +
                      std::to_string(names_.size()) +
                      " fields as in the header, found " +
                      std::to_string(fields.size()));
}

bool OpsCsvParser::FieldError(size_t field_index, const std::string& what) {
  error_ = InvalidInput(LinePrefix(tokenizer_.record_line()) + "column '" +
                        names_[field_index] + "': " + what);
  return false;
}

Status OpsCsvParser::ReadHeader() {
  std::vector<CsvField> fields;
  if (!tokenizer_.Next(&fields)) {
    if (tokenizer_.error()) return TokenizerError();
    return InvalidInput(std::string(source_) +
                        ": empty file (expected a header line)");
  }
  for (const CsvField& field : fields) {
    std::string name = field.Value();
    if (std::find(names_.begin(), names_.end(), name) != names_.end()) {
      return InvalidInput(LinePrefix(1) + "duplicate column '" + name + "'");
    }
    const auto known = std::find(ops_csv::kColumnNames.begin(),
                                 ops_csv::kColumnNames.end(), name);
    if (known == ops_csv::kColumnNames.end()) {
      roles_.push_back(kExtraField);
      extra_index_.push_back(table_.extra.size());
      table_.extra.push_back(trace::ExtraColumn{name, {}});
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
    return InvalidInput(std::string(source_) + ": missing required column '" +
                        std::string(ops_csv::kColumnNames[c]) +
                        "' (header has: " + header + ")");
  }
  return Status::Ok();
}

// Guesses the row count from the line density of the first 64 KiB, so the
// columns are allocated once (a few percent of slack) instead of doubling.
void OpsCsvParser::ReserveRows() {
  const size_t body = csv_.size() - tokenizer_.position();
  const size_t sample = std::min<size_t>(body, 64 * 1024);
  const auto sample_begin =
      csv_.begin() + static_cast<std::ptrdiff_t>(tokenizer_.position());
  const auto lines = static_cast<size_t>(std::count(
      sample_begin, sample_begin + static_cast<std::ptrdiff_t>(sample), '\n'));
  size_t rows = 16;
  if (lines > 0 && sample > 0) {
    rows += static_cast<size_t>(static_cast<double>(body) /
                                static_cast<double>(sample) *
                                static_cast<double>(lines) * 1.02);
  }
  table_.Reserve(rows);
  table_.start_s32.reserve(rows);
  table_.dur_s32.reserve(rows);
  if (present_[static_cast<size_t>(Column::kTp)]) table_.tp.reserve(rows);
  if (present_[static_cast<size_t>(Column::kCp)]) table_.cp.reserve(rows);
  if (present_[static_cast<size_t>(Column::kTokens)]) {
    table_.tokens.reserve(rows);
  }
  for (trace::ExtraColumn& extra : table_.extra) extra.values.reserve(rows);
}

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
  }
  if (tokenizer_.error()) return TokenizerError();
  return Status::Ok();
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
bool OpsCsvParser::ReadInt(size_t i, IntMin min, std::vector<T>* column) {
  const char* begin = tokenizer_.cursor();
  T value{};
  const char* ptr = ParseDecimal(begin, tokenizer_.end(), &value);
  if (ptr == nullptr || !tokenizer_.IsFieldEnd(ptr)) {
    return ReadIntSlow(i, min, column);
  }
  tokenizer_.Advance(ptr);
  return StoreInt(i, min,
                  std::string_view(begin, static_cast<size_t>(ptr - begin)),
                  value, column);
}

template <typename T>
bool OpsCsvParser::ReadIntSlow(size_t i, IntMin min, std::vector<T>* column) {
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
    return FieldError(i, Quoted(text) + " is out of range");
  }
  if (ec != std::errc() || ptr != end) {
    return FieldError(i, Quoted(text) + " is not an integer");
  }
  return StoreInt(i, min, text, value, column);
}

template <typename T>
bool OpsCsvParser::StoreInt(size_t i, IntMin min, std::string_view text,
                            T value, std::vector<T>* column) {
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
                               std::vector<int64_t>* ns,
                               std::vector<float>* s32) {
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
                                   std::vector<int64_t>* ns,
                                   std::vector<float>* s32) {
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
                                std::vector<int64_t>* ns,
                                std::vector<float>* s32) {
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
  ns->push_back(ops_csv::SecondsToNs(seconds));
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
                             " (expected one of " + ExpectedOpTypes() + ")");
  }
  table_.op_type.push_back(*type);
  return true;
}

bool OpsCsvParser::ReadExtra(size_t i) {
  std::string text;
  if (!ReadFieldText(i, &text)) return false;
  table_.extra[extra_index_[i]].values.push_back(std::move(text));
  return true;
}

// mc, mb_id and gmc are columns of every table; -1 says "not recorded".
void OpsCsvParser::FillAbsentColumns() {
  const size_t rows = table_.op_type.size();
  if (!present_[static_cast<size_t>(Column::kChunk)]) {
    table_.chunk.assign(rows, -1);
  }
  if (!present_[static_cast<size_t>(Column::kMicrobatch)]) {
    table_.microbatch.assign(rows, -1);
  }
  if (!present_[static_cast<size_t>(Column::kGlobalChunk)]) {
    table_.global_chunk.assign(rows, -1);
  }
}

}  // namespace

Result<trace::OpsTable> ParseOpsCsv(std::string_view csv,
                                    std::string_view source_name) {
  return OpsCsvParser(csv, source_name).Parse();
}

}  // namespace strag::ingest
