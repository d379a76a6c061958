// SPDX-License-Identifier: Apache-2.0
// CsvTokenizer: cuts CSV text into records and fields (RFC 4180 quoting),
// without copying: fields are views into the input.
//
// Accepted: `\n` or `\r\n` line ends, a missing final newline, blank lines
// (skipped), fields in double quotes that may hold `,`, `""` (one quote)
// and line breaks. A quote inside an unquoted field is kept as text.
//
// Two levels of use. Whole records:
//   CsvTokenizer tok(text);
//   std::vector<CsvField> fields;
//   while (tok.Next(&fields)) { ... tok.record_line() ... }
//   if (tok.error()) { ... tok.error()->line, tok.error()->what ... }
// or field by field, for readers that convert numbers in place and so scan
// each byte once (see ops_csv_reader.cc):
//   while (tok.BeginRecord()) {
//     ... std::from_chars(tok.cursor(), tok.end(), x) ... tok.Advance(ptr);
//     ... tok.ReadField(i, &field) ...; tok.ConsumeDelimiter() ...
//   }

#ifndef STRAG_SRC_INGEST_OPS_CSV_CSV_TOKENIZER_H_
#define STRAG_SRC_INGEST_OPS_CSV_CSV_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
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

// A malformed record: 1-based line and 0-based field index where it is.
struct CsvError {
  size_t line = 0;
  size_t field_index = 0;
  std::string what;
  // The input ended inside a quoted field: when the input is a piece of a
  // longer text, more text may complete the record (see OpsCsvParser).
  bool input_ended = false;
};

// What ConsumeDelimiter found after a field.
enum class CsvDelimiter {
  kComma,      // another field follows
  kRecordEnd,  // `\n`, `\r\n` or the end of the input
  kNone,       // anything else (left unconsumed)
};

class CsvTokenizer {
 public:
  // `text` must outlive the tokenizer and the fields it returns. A leading
  // UTF-8 byte order mark is skipped.
  explicit CsvTokenizer(std::string_view text)
      : CsvTokenizer(text, /*first_line=*/1, /*input_start=*/true) {}
  // For a text read in pieces: `text` starts at a record boundary on line
  // `first_line`; a byte order mark is looked for only at the `input_start`.
  CsvTokenizer(std::string_view text, size_t first_line, bool input_start);

  // Reads the next non-blank record into `fields` (cleared first). Returns
  // false at the end of the input or on a malformed record (also one of
  // more than `max_fields` fields); error() tells which. O(record length).
  bool Next(std::vector<CsvField>* fields, size_t max_fields = SIZE_MAX);
  // The fields of the next non-blank record, counted, not kept (as many as
  // Next would have put in `fields`): for messages about a huge record.
  size_t CountFields();

  // Skips blank lines and starts a record; false at the end of the input.
  bool BeginRecord();
  // Reads the field at the cursor, quoted or not, and leaves the cursor on
  // the delimiter after it. False (and error() set) on a broken quote.
  bool ReadField(size_t field_index, CsvField* field);
  // Consumes the `,` or line end at the cursor, if that is what is there.
  CsvDelimiter ConsumeDelimiter();
  // True when a field may end at `p`: `,`, `\n`, `\r\n`, `\r` at the end, or
  // the end of the input.
  bool IsFieldEnd(const char* p) const {
    return p == end_ || *p == ',' || *p == '\n' ||
           (*p == '\r' && (p + 1 == end_ || p[1] == '\n'));
  }

  // The next unread byte, and the end of the input.
  const char* cursor() const { return cursor_; }
  const char* end() const { return end_; }
  // Moves the cursor forward to `p`, which must not pass a line break.
  void Advance(const char* p) { cursor_ = p; }

  // 1-based line on which the current record starts, and the line of the
  // cursor.
  size_t record_line() const { return record_line_; }
  size_t line() const { return line_; }
  // The text of the current record from its start to the end of the input,
  // and the offset of that start in the input.
  std::string_view RestFromRecordStart() const;
  size_t record_position() const {
    return static_cast<size_t>(record_start_ - text_.data());
  }
  // Bytes consumed so far (for size estimates).
  size_t position() const {
    return static_cast<size_t>(cursor_ - text_.data());
  }
  const std::optional<CsvError>& error() const { return error_; }

 private:
  bool ReadQuotedField(size_t field_index, CsvField* field);
  void ReadPlainField(CsvField* field);
  bool Fail(size_t field_index, std::string what, bool input_ended = false);

  std::string_view text_;
  const char* cursor_;
  const char* end_;
  const char* record_start_;
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
