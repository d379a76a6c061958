// SPDX-License-Identifier: Apache-2.0
// Field conversions of the ops CSV parser (internal to ingest/ops_csv):
// op type names, fast decimal integers, and the quoting of bad values in
// error messages.

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FIELDS_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FIELDS_H_

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "trace/op_type.h"

namespace strag::ingest::ops_csv {

// Finds an op type by name with at most a couple of comparisons: names are
// bucketed by length (a bit mask of candidate types per length).
class OpTypeLookup {
 public:
  OpTypeLookup();

  // Inline: called once per row.
  std::optional<trace::OpType> Find(std::string_view name) const {
    if (name.size() >= masks_.size()) return std::nullopt;
    for (uint32_t m = masks_[name.size()]; m != 0; m &= m - 1) {
      const int i = std::countr_zero(m);
      if (names_[static_cast<size_t>(i)] == name) {
        return static_cast<trace::OpType>(i);
      }
    }
    return std::nullopt;
  }

 private:
  std::array<std::string_view, trace::kNumOpTypes> names_{};
  std::array<uint32_t, 40> masks_{};
};

// The process-wide lookup (built once, thread-safe).
const OpTypeLookup& GetOpTypeLookup();

// "forward-compute, backward-compute, ..., gc": for error messages.
std::string ExpectedOpTypes();

// `text` in double quotes, shortened so that one bad field cannot flood the
// message.
std::string Quoted(std::string_view text);

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

}  // namespace strag::ingest::ops_csv

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FIELDS_H_
