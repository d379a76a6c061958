// SPDX-License-Identifier: Apache-2.0
// CsvTokenizer: cuts CSV text into records and fields (RFC 4180 quoting),
// without copying: fields are views into the input.
//
// Accepted: `\n` or `\r\n` line ends, a missing final newline, blank lines
// (skipped), fields in double quotes that may hold `,`, `""` (one quote)
// and line breaks. A quote inside an unquoted field is kept as text.
//
// Usage:
//   CsvTokenizer tok(text);
//   std::vector<CsvField> fields;
//   while (tok.Next(&fields)) { ... tok.record_line() ... }
//   if (tok.error()) { ... tok.error()->line, tok.error()->what ... }

#ifndef STRAG_SRC_INGEST_OPS_CSV_CSV_TOKENIZER_H_
#define STRAG_SRC_INGEST_OPS_CSV_CSV_TOKENIZER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strag::ingest {

struct CsvField {
  // For a quoted field, the text between the quotes with `""` still doubled
  // (see `escaped`); otherwise the raw text. Points into the tokenizer input.
  std::string_view text;
  bool quoted = false;
  bool escaped = false;  // `text` contains `""` pairs to be undone

  // The field's value with `""` turned into `"` (allocates).
  std::string Value() const;
};

// A malformed record: 1-based line and 0-based field index where it starts.
struct CsvError {
  size_t line = 0;
  size_t field_index = 0;
  std::string what;
};

class CsvTokenizer {
 public:
  // `text` must outlive the tokenizer and the fields it returns. A leading
  // UTF-8 byte order mark is skipped.
  explicit CsvTokenizer(std::string_view text);

  // Reads the next non-blank record into `fields` (cleared first). Returns
  // false at the end of the input or on a malformed record; error() tells
  // which. O(record length).
  bool Next(std::vector<CsvField>* fields);

  // 1-based line on which the last record returned by Next() starts.
  size_t record_line() const { return record_line_; }
  // Bytes consumed so far (for size estimates).
  size_t position() const { return pos_; }
  const std::optional<CsvError>& error() const { return error_; }

 private:
  // Reads one field starting at pos_; returns false on a malformed field.
  bool ReadQuotedField(size_t field_index, CsvField* field);
  void ReadPlainField(CsvField* field);
  bool Fail(size_t field_index, std::string what);

  std::string_view text_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t record_line_ = 0;
  std::optional<CsvError> error_;
};

// True when `value` must be quoted to survive a CSV round trip.
bool CsvNeedsQuoting(std::string_view value);
// Appends `value` to `out`, quoted (and with `"` doubled) only if needed.
void AppendCsvField(std::string_view value, std::string* out);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_OPS_CSV_CSV_TOKENIZER_H_
