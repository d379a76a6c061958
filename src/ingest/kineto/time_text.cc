// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/time_text.h"

#include "ingest/common/decimal_time.h"

namespace strag::ingest::kineto {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The common case without int128 arithmetic: up to 9e15 us (16 digits,
// the epoch in microseconds) with up to 3 decimals.
std::optional<int64_t> FastMicrosToNanos(std::string_view text) {
  size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  int64_t us = 0;
  size_t int_digits = 0;
  for (; i < text.size() && IsDigit(text[i]) && int_digits <= 16; ++i) {
    us = us * 10 + (text[i] - '0');
    ++int_digits;
  }
  if (int_digits == 0 || int_digits > 16 ||
      us > int64_t{9'000'000'000'000'000}) {
    return std::nullopt;
  }
  int64_t frac = 0;
  size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && IsDigit(text[i]) && frac_digits < 3) {
      frac = frac * 10 + (text[i++] - '0');
      ++frac_digits;
    }
  }
  if (i != text.size()) return std::nullopt;  // more decimals, exponent, junk
  static constexpr int64_t kScale[] = {1000, 100, 10, 1};
  const int64_t ns = us * 1000 + frac * kScale[frac_digits];
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
