// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/time_text.h"

#include <cstring>

#include "ingest/common/decimal_time.h"

namespace strag::ingest::kineto {
namespace {

// Whether the 8 bytes of `chunk` (as loaded little-endian) are all ASCII
// digits: each byte's high nibble is 3, before and after adding 6 (which
// takes ':' and above to 4 or more).
bool EightDigits(uint64_t chunk) {
  constexpr uint64_t kHigh = 0xf0f0f0f0f0f0f0f0;
  constexpr uint64_t kSix = 0x0606060606060606;
  return ((chunk & kHigh) | (((chunk + kSix) & kHigh) >> 4)) ==
         0x3333333333333333;
}

// The value of 8 digits, the first in the lowest byte: pairs, then
// quadruples, then the whole, each step in lanes twice as wide (no lane
// carries into the next).
uint64_t EightDigitsValue(uint64_t chunk) {
  uint64_t x = chunk - 0x3030303030303030;
  x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ff;         // 2 digits per 16 bits
  x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffff;       // 4 digits per 32 bits
  return (x * 10000 + (x >> 32)) & 0x00000000ffffffff;  // all 8
}

// Appends the decimal digits at [*p, end) to *value, advancing *p past
// them; returns how many. The value wraps past 19 digits: the callers
// reject those counts before using it. One test per byte: the loop is
// what a timestamp costs.
size_t AppendDigits(const char** p, const char* end, uint64_t* value) {
  const char* const begin = *p;
  const char* q = begin;
  uint64_t v = *value;
  for (; q < end; ++q) {
    const auto digit =
        static_cast<uint64_t>(static_cast<unsigned char>(*q)) - uint64_t{'0'};
    if (digit > 9) break;
    v = v * 10 + digit;
  }
  *p = q;
  *value = v;
  return static_cast<size_t>(q - begin);
}

// The common case without int128 arithmetic: up to 9e15 us (16 digits,
// the epoch in microseconds) with up to 3 decimals. Timestamps have 13 to
// 16 integer digits: the first 8 are read at once.
std::optional<int64_t> FastMicrosToNanos(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  uint64_t us = 0;
  size_t int_digits = 0;
  uint64_t chunk = 0;
  if (end - p >= 8 && (std::memcpy(&chunk, p, 8), EightDigits(chunk))) {
    us = EightDigitsValue(chunk);
    p += 8;
    int_digits = 8;
  }
  int_digits += AppendDigits(&p, end, &us);
  if (int_digits == 0 || int_digits > 16 || us > 9'000'000'000'000'000) {
    return std::nullopt;
  }
  uint64_t frac = 0;
  size_t frac_digits = 0;
  if (p < end && *p == '.') {
    ++p;
    frac_digits = AppendDigits(&p, end, &frac);
  }
  // More decimals, an exponent or junk: the exact path decides.
  if (frac_digits > 3 || p != end) return std::nullopt;
  static constexpr int64_t kScale[] = {1000, 100, 10, 1};
  const int64_t ns = static_cast<int64_t>(us) * 1000 +
                     static_cast<int64_t>(frac) * kScale[frac_digits];
  return negative ? -ns : ns;
}

}  // namespace

std::optional<int64_t> MicrosTextToNanos(std::string_view text) {
  if (const auto fast = FastMicrosToNanos(text)) return fast;
  const std::optional<trace::ExactTime> t = DecimalTextToExactTime(text, 3);
  if (!t) return std::nullopt;
  return t->ns;
}

}  // namespace strag::ingest::kineto
