// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/csv_tokenizer.h"

#include <cstring>
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

CsvTokenizer::CsvTokenizer(std::string_view text) : text_(text) {
  if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
}

bool CsvTokenizer::Fail(size_t field_index, std::string what) {
  error_ = CsvError{record_line_, field_index, std::move(what)};
  return false;
}

bool CsvTokenizer::Next(std::vector<CsvField>* fields) {
  fields->clear();
  if (error_) return false;
  // Blank lines (and the `\r` of blank CRLF lines) are not records.
  while (pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r')) {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }
  if (pos_ == text_.size()) return false;
  record_line_ = line_;
  while (true) {
    CsvField& field = fields->emplace_back();
    if (text_[pos_] == '"') {
      if (!ReadQuotedField(fields->size() - 1, &field)) return false;
    } else {
      ReadPlainField(&field);
    }
    // pos_ is now on the delimiter after the field, or at the end.
    if (pos_ == text_.size()) return true;
    if (text_[pos_] == '\n') {
      ++pos_;
      ++line_;
      return true;
    }
    ++pos_;  // a ','
    if (pos_ == text_.size()) {  // "a,b," at the very end: one empty field
      fields->emplace_back();
      return true;
    }
  }
}

void CsvTokenizer::ReadPlainField(CsvField* field) {
  const char* begin = text_.data() + pos_;
  const char* end = text_.data() + text_.size();
  const char* p = begin;
  while (p != end && *p != ',' && *p != '\n') ++p;
  pos_ = static_cast<size_t>(p - text_.data());
  const char* field_end = p;
  // The `\r` of a CRLF line end belongs to no field.
  if (field_end != begin && field_end[-1] == '\r' && (p == end || *p == '\n')) {
    --field_end;
  }
  field->text = std::string_view(begin, static_cast<size_t>(field_end - begin));
}

bool CsvTokenizer::ReadQuotedField(size_t field_index, CsvField* field) {
  const size_t begin = pos_ + 1;
  size_t p = begin;
  while (true) {
    const size_t quote = text_.find('"', p);
    if (quote == std::string_view::npos) {
      return Fail(field_index, "quoted field has no closing quote");
    }
    // Line breaks inside quotes are data; keep line numbers true.
    for (size_t i = p; i < quote; ++i) line_ += text_[i] == '\n' ? 1 : 0;
    if (quote + 1 < text_.size() && text_[quote + 1] == '"') {
      field->escaped = true;
      p = quote + 2;
      continue;
    }
    field->quoted = true;
    field->text = text_.substr(begin, quote - begin);
    pos_ = quote + 1;
    break;
  }
  if (pos_ < text_.size() && text_[pos_] == '\r' &&
      (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n')) {
    ++pos_;
  }
  if (pos_ == text_.size() || text_[pos_] == ',' || text_[pos_] == '\n') {
    return true;
  }
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
