// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/csv_tokenizer.h"

#include <algorithm>
#include <utility>

namespace strag::ingest {

std::string CsvField::Value() const {
  if (!escaped) return std::string(text);
  std::string value;
  value.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    value.push_back(text[i]);
    if (text[i] == '"') ++i;  // skip the second quote of a `""` pair
  }
  return value;
}

CsvTokenizer::CsvTokenizer(std::string_view text, size_t first_line,
                           bool input_start)
    : text_(text),
      cursor_(text.data()),
      end_(text.data() + text.size()),
      record_start_(text.data()),
      line_(first_line) {
  if (input_start && text_.starts_with("\xEF\xBB\xBF")) cursor_ += 3;
}

bool CsvTokenizer::Fail(size_t field_index, std::string what,
                        bool input_ended) {
  error_ = CsvError{record_line_, field_index, std::move(what), input_ended};
  return false;
}

std::string_view CsvTokenizer::RestFromRecordStart() const {
  return std::string_view(record_start_,
                          static_cast<size_t>(end_ - record_start_));
}

bool CsvTokenizer::BeginRecord() {
  if (error_) return false;
  // Blank lines (and the `\r` of blank CRLF lines) are not records.
  while (cursor_ != end_ && (*cursor_ == '\n' || *cursor_ == '\r')) {
    if (*cursor_ == '\n') ++line_;
    ++cursor_;
  }
  record_start_ = cursor_;
  record_line_ = line_;
  return cursor_ != end_;
}

bool CsvTokenizer::Next(std::vector<CsvField>* fields, size_t max_fields) {
  fields->clear();
  if (!BeginRecord()) return false;
  while (true) {
    if (fields->size() == max_fields) {
      return Fail(fields->size(),
                  "more than " + std::to_string(max_fields) + " fields");
    }
    CsvField& field = fields->emplace_back();
    if (!ReadField(fields->size() - 1, &field)) return false;
    switch (ConsumeDelimiter()) {
      case CsvDelimiter::kComma:
        break;
      case CsvDelimiter::kRecordEnd:
        return true;
      case CsvDelimiter::kNone:
        return Fail(fields->size() - 1, "unexpected text after the field");
    }
  }
}

size_t CsvTokenizer::CountFields() {
  if (!BeginRecord()) return 0;
  CsvField field;
  for (size_t count = 1;; ++count) {
    if (!ReadField(count - 1, &field)) return count;
    if (ConsumeDelimiter() != CsvDelimiter::kComma) return count;
  }
}

CsvDelimiter CsvTokenizer::ConsumeDelimiter() {
  if (cursor_ == end_) return CsvDelimiter::kRecordEnd;
  if (*cursor_ == ',') {
    ++cursor_;
    return CsvDelimiter::kComma;
  }
  if (*cursor_ == '\r' && cursor_ + 1 != end_ && cursor_[1] == '\n') {
    ++cursor_;
  }
  if (*cursor_ == '\n') {
    ++cursor_;
    ++line_;
    return CsvDelimiter::kRecordEnd;
  }
  if (*cursor_ == '\r' && cursor_ + 1 == end_) {
    ++cursor_;
    return CsvDelimiter::kRecordEnd;
  }
  return CsvDelimiter::kNone;
}

bool CsvTokenizer::ReadField(size_t field_index, CsvField* field) {
  if (cursor_ != end_ && *cursor_ == '"') {
    return ReadQuotedField(field_index, field);
  }
  ReadPlainField(field);
  return true;
}

void CsvTokenizer::ReadPlainField(CsvField* field) {
  const char* p = cursor_;
  // A `\r` ends the field only as part of a line end.
  while (!IsFieldEnd(p)) ++p;
  field->text = std::string_view(cursor_, static_cast<size_t>(p - cursor_));
  cursor_ = p;
}

bool CsvTokenizer::ReadQuotedField(size_t field_index, CsvField* field) {
  const char* begin = cursor_ + 1;
  const char* p = begin;
  while (true) {
    const char* quote = std::find(p, end_, '"');
    if (quote == end_) {
      return Fail(field_index, "quoted field has no closing quote",
                  /*input_ended=*/true);
    }
    // Line breaks inside quotes are data; keep line numbers true.
    line_ += static_cast<size_t>(std::count(p, quote, '\n'));
    if (quote + 1 != end_ && quote[1] == '"') {
      field->escaped = true;
      p = quote + 2;
      continue;
    }
    field->quoted = true;
    field->text = std::string_view(begin, static_cast<size_t>(quote - begin));
    cursor_ = quote + 1;
    break;
  }
  if (IsFieldEnd(cursor_)) return true;
  return Fail(field_index, "unexpected text after the closing quote");
}

bool CsvNeedsQuoting(std::string_view value) {
  return value.find_first_of(",\"\r\n") != std::string_view::npos;
}

void AppendCsvField(std::string_view value, std::string* out) {
  if (!CsvNeedsQuoting(value)) {
    out->append(value);
    return;
  }
  out->push_back('"');
  for (char c : value) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

}  // namespace strag::ingest
