// SPDX-License-Identifier: Apache-2.0
#include "trace/extra_column.h"

namespace strag::trace {

ExtraColumn::ExtraColumn(std::string column_name,
                         const std::vector<std::string>& values)
    : name(std::move(column_name)) {
  ends_.reserve(values.size());
  for (const std::string& value : values) push_back(value);
}

std::vector<std::string> ExtraColumn::Values() const {
  std::vector<std::string> values;
  values.reserve(size());
  for (size_t row = 0; row < size(); ++row) values.emplace_back((*this)[row]);
  return values;
}

void ExtraColumn::Append(const ExtraColumn& other, size_t from, size_t to) {
  if (from >= to) return;
  const uint64_t begin = from == 0 ? 0 : other.ends_[from - 1];
  const uint64_t shift = text_.size() - begin;  // (mod 2^64)
  text_.append(other.text_, begin, other.ends_[to - 1] - begin);
  ends_.reserve(ends_.size() + (to - from));
  for (size_t row = from; row < to; ++row) {
    ends_.push_back(other.ends_[row] + shift);
  }
}

void ExtraColumn::Truncate(size_t rows) {
  if (rows >= ends_.size()) return;
  text_.resize(rows == 0 ? 0 : ends_[rows - 1]);
  ends_.resize(rows);
}

Result<ExtraColumn> ExtraColumn::FromParts(std::string name, std::string text,
                                           Column<uint64_t> ends) {
  uint64_t previous = 0;
  for (const uint64_t end : ends) {
    if (end < previous || end > text.size()) {
      return Internal("ExtraColumn " + name + ": ends out of order");
    }
    previous = end;
  }
  if (previous != text.size()) {
    return Internal("ExtraColumn " + name + ": text past the last value");
  }
  ExtraColumn column(std::move(name));
  column.text_ = std::move(text);
  column.ends_ = std::move(ends);
  return column;
}

}  // namespace strag::trace
