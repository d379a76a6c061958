// SPDX-License-Identifier: Apache-2.0
// ExtraColumn: a column of text that the table does not interpret.

#ifndef STRAG_SRC_TRACE_EXTRA_COLUMN_H_
#define STRAG_SRC_TRACE_EXTRA_COLUMN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "trace/column.h"

namespace strag::trace {

// A column the table does not interpret (e.g. `seq_lens`, `name`), kept
// verbatim so that nothing in the input is lost. Its values lie back to
// back in one buffer, with where each ends: 8 bytes per row and the text's
// own bytes (a std::string per row took 32 bytes and more: for the
// simulator's `seq_lens` of 4-6 characters, 13 bytes against 32).
class ExtraColumn {
 public:
  ExtraColumn() = default;
  explicit ExtraColumn(std::string column_name)
      : name(std::move(column_name)) {}
  ExtraColumn(std::string column_name, const std::vector<std::string>& values);

  std::string name;

  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  // Row `row`'s value; valid until the column changes.
  std::string_view operator[](size_t row) const {
    const uint64_t begin = row == 0 ? 0 : ends_[row - 1];
    return std::string_view(text_).substr(begin, ends_[row] - begin);
  }

  void push_back(std::string_view value) {
    text_.append(value);
    ends_.push_back(text_.size());
  }
  // Appends rows [from, to) of `other`.
  void Append(const ExtraColumn& other, size_t from, size_t to);
  // Keeps the first `rows` rows (all when there are fewer).
  void Truncate(size_t rows);
  // Empties the column, keeping its name and memory.
  void clear() {
    text_.clear();
    ends_.clear();
  }
  void reserve(size_t rows) { ends_.reserve(rows); }

  // The values, copied (tests, small tables).
  std::vector<std::string> Values() const;

  // Every value back to back, and each one's end in it (ascending).
  const std::string& text() const { return text_; }
  const Column<uint64_t>& ends() const { return ends_; }
  // The column of these parts; fails (kInternal) when `ends` does not
  // ascend to at most the text's size.
  static Result<ExtraColumn> FromParts(std::string name, std::string text,
                                       Column<uint64_t> ends);

  // Same name and values.
  bool operator==(const ExtraColumn& other) const = default;

 private:
  std::string text_;
  Column<uint64_t> ends_;
};

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_EXTRA_COLUMN_H_
