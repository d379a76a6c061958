// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_writer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "ingest/common/decimal_time.h"
#include "ingest/ops_csv/csv_tokenizer.h"
#include "ingest/ops_csv/ops_csv_schema.h"
#include "trace/op_type.h"

namespace strag::ingest {
namespace {

using ops_csv::Column;

// Room for any int64 or shortest double text.
using NumberBuffer = std::array<char, 40>;

template <typename T>
void AppendNumber(T value, std::string* out) {
  NumberBuffer buffer;
  const auto result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out->append(buffer.data(), result.ptr);
}

template <typename T>
std::string_view ToChars(T value, NumberBuffer* buffer) {
  const auto result =
      std::to_chars(buffer->data(), buffer->data() + buffer->size(), value);
  return std::string_view(buffer->data(),
                          static_cast<size_t>(result.ptr - buffer->data()));
}

// Appends ExactTimeToSecondsText({ns, 0}): the seconds, then the nine
// digits of nanoseconds without their trailing zeros. The same text, at a
// fraction of the cost (no 128-bit division per digit): a simulated trace
// writes two per row.
void AppendNsAsSeconds(int64_t ns, std::string* out) {
  if (ns < 0) out->push_back('-');
  // |INT64_MIN| fits the unsigned type.
  const uint64_t magnitude =
      ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  AppendNumber(magnitude / 1'000'000'000, out);
  uint64_t fraction = magnitude % 1'000'000'000;
  if (fraction == 0) return;
  char digits[10] = {'.'};
  int last = 9;  // the last digit kept
  for (int i = 9; i >= 1; --i) {
    digits[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  while (digits[last] == '0') --last;
  out->append(digits, static_cast<size_t>(last) + 1);
}

// True when ParseOpsCsv turns `text` into exactly (`s32`, `ns`): starts
// take their nanoseconds from the digits, durations from the binary64.
bool ReadsBackAs(std::string_view text, float s32, int64_t ns, bool start) {
  double seconds = 0;
  const auto result =
      std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (result.ec != std::errc()) return false;
  if (std::bit_cast<uint32_t>(static_cast<float>(seconds)) !=
      std::bit_cast<uint32_t>(s32)) {
    return false;
  }
  if (!start) return ops_csv::SecondsToNs(seconds) == ns;
  const std::optional<trace::ExactTime> exact = DecimalTextToExactTime(text, 9);
  return exact && exact->ns == ns;
}

// The middle of the seconds that round both to `s32` (binary32) and to `ns`
// (nanoseconds); empty when the two disagree by more than a rounding step.
std::optional<double> CommonValue(float s32, int64_t ns) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const double f = s32;
  const double f_lo = (f + static_cast<double>(std::nextafter(s32, -kInf))) / 2;
  const double f_hi = (f + static_cast<double>(std::nextafter(s32, kInf))) / 2;
  const double ns_lo = (static_cast<double>(ns) - 0.5) / 1e9;
  const double ns_hi = (static_cast<double>(ns) + 0.5) / 1e9;
  const double lo = std::max(f_lo, ns_lo);
  const double hi = std::min(f_hi, ns_hi);
  if (!(lo < hi)) return std::nullopt;
  return lo + (hi - lo) / 2;
}

// Writes a time that has both an exact binary32 value and a ns value; see
// WriteOpsCsv for the order of preference.
void AppendTimeS32(float s32, int64_t ns, bool start, std::string* out) {
  NumberBuffer buffer;
  const std::string_view shortest_float = ToChars(s32, &buffer);
  if (ReadsBackAs(shortest_float, s32, ns, start)) {
    out->append(shortest_float);
    return;
  }
  NumberBuffer candidate_buffer;
  const std::string_view from_ns =
      ToChars(static_cast<double>(ns) / 1e9, &candidate_buffer);
  if (ReadsBackAs(from_ns, s32, ns, start)) {
    out->append(from_ns);
    return;
  }
  if (const std::optional<double> common = CommonValue(s32, ns)) {
    const std::string_view text = ToChars(*common, &candidate_buffer);
    if (ReadsBackAs(text, s32, ns, start)) {
      out->append(text);
      return;
    }
  }
  // Inconsistent table (ns not a rounding of s32): keep the exact source.
  out->append(shortest_float);
}

// A start: its shortest binary32 text when that reads back exactly, else
// the exact digits (an epoch origin), which read back to the same binary32
// because the binary32 was rounded from them.
void AppendStartS32(float s32, trace::ExactTime exact, std::string* out) {
  NumberBuffer buffer;
  const std::string_view shortest_float = ToChars(s32, &buffer);
  if (ReadsBackAs(shortest_float, s32, exact.ns, /*start=*/true) &&
      DecimalTextToExactTime(shortest_float, 9) == exact) {
    out->append(shortest_float);
    return;
  }
  const std::string text = ExactTimeToSecondsText(exact);
  if (ReadsBackAs(text, s32, exact.ns, /*start=*/true)) {
    out->append(text);
    return;
  }
  AppendTimeS32(s32, exact.ns, /*start=*/true, out);
}

// Appends the fields of one CSV record, inserting the commas.
class RecordWriter {
 public:
  explicit RecordWriter(std::string* out) : out_(out) {}

  void End() { out_->push_back('\n'); }

  template <typename T>
  void Number(T value) {
    Separate();
    AppendNumber(value, out_);
  }
  void Text(std::string_view text) {
    Separate();
    AppendCsvField(text, out_);
  }
  void Time(const trace::OpsTable& table, bool start, size_t row) {
    Separate();
    const int64_t ns = start ? table.start_ns[row] : table.dur_ns[row];
    if (!table.has_s32_times()) {
      // Exact digits: a binary64 of an epoch in seconds drops nanoseconds
      // (the same text as the binary64's below ~4e6 s).
      AppendNsAsSeconds(ns, out_);
      return;
    }
    if (start) {
      AppendStartS32(table.start_s32[row], table.ExactStart(row), out_);
    } else {
      AppendTimeS32(table.dur_s32[row], ns, start, out_);
    }
  }

 private:
  void Separate() {
    if (!first_) out_->push_back(',');
    first_ = false;
  }

  std::string* out_;
  bool first_ = true;
};

}  // namespace

void AppendOpsCsvHeader(const trace::OpsTable& table, std::string* out) {
  RecordWriter header(out);
  for (size_t c = 0; c <= static_cast<size_t>(Column::kGlobalChunk); ++c) {
    header.Text(ops_csv::kColumnNames[c]);
  }
  if (!table.tp.empty()) header.Text(ops_csv::ColumnName(Column::kTp));
  if (!table.cp.empty()) header.Text(ops_csv::ColumnName(Column::kCp));
  if (!table.tokens.empty()) header.Text(ops_csv::ColumnName(Column::kTokens));
  for (const trace::ExtraColumn& extra : table.extra) header.Text(extra.name);
  header.End();
}

namespace {

void AppendRow(const trace::OpsTable& table, size_t row, std::string* out) {
  RecordWriter record(out);
  record.Number(table.dp[row]);
  record.Number(table.pp[row]);
  record.Number(table.rank[row]);
  record.Number(table.step[row]);
  record.Text(trace::OpTypeName(table.op_type[row]));
  record.Time(table, /*start=*/true, row);
  record.Time(table, /*start=*/false, row);
  record.Number(table.seq_id[row]);
  record.Number(table.chunk[row]);
  record.Number(table.microbatch[row]);
  record.Number(table.global_chunk[row]);
  if (!table.tp.empty()) record.Number(table.tp[row]);
  if (!table.cp.empty()) record.Number(table.cp[row]);
  if (!table.tokens.empty()) record.Number(table.tokens[row]);
  for (const trace::ExtraColumn& extra : table.extra) {
    record.Text(extra[row]);
  }
  record.End();
}

}  // namespace

void AppendOpsCsvRows(const trace::OpsTable& table, size_t begin, size_t end,
                      std::string* out) {
  for (size_t row = begin; row < end; ++row) AppendRow(table, row, out);
}

std::string WriteOpsCsv(const trace::OpsTable& table) {
  std::string out;
  out.reserve(128 + table.size() * (80 + 16 * table.extra.size()));
  AppendOpsCsvHeader(table, &out);
  AppendOpsCsvRows(table, 0, table.size(), &out);
  return out;
}

}  // namespace strag::ingest
