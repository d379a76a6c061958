// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/time_text.h"

#include <limits>

namespace strag::ingest::kineto {
namespace {

using Wide = unsigned __int128;

// More significant digits than any timestamp has; later ones are dropped
// (they are far below the nanosecond).
constexpr int kMaxDigits = 36;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Wide Pow10(int n) {
  Wide p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

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
  size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  Wide mantissa = 0;
  int kept = 0;      // significant digits in `mantissa`
  int exponent = 3;  // value = mantissa * 10^exponent nanoseconds
  bool any_digit = false;
  bool fraction = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !fraction) {
      fraction = true;
      continue;
    }
    if (!IsDigit(c)) break;
    any_digit = true;
    if (mantissa == 0 && c == '0') {
      if (fraction) --exponent;  // a leading zero after the point
      continue;
    }
    if (kept < kMaxDigits) {
      mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      ++kept;
      if (fraction) --exponent;
    } else if (!fraction) {
      ++exponent;  // an integer digit that does not fit: scale instead
    }
  }
  if (!any_digit) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    const bool exp_negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    if (i >= text.size() || !IsDigit(text[i])) return std::nullopt;
    int value = 0;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (value < 100000) value = value * 10 + (text[i] - '0');
    }
    exponent += exp_negative ? -value : value;
  }
  if (i != text.size()) return std::nullopt;
  const Wide limit = static_cast<Wide>(std::numeric_limits<int64_t>::max()) +
                     (negative ? 1 : 0);
  Wide ns = 0;
  if (mantissa == 0) {
    ns = 0;
  } else if (exponent >= 0) {
    if (exponent > 19) return std::nullopt;  // >= 1e19 ns does not fit
    const Wide scale = Pow10(exponent);
    if (mantissa > limit / scale) return std::nullopt;
    ns = mantissa * scale;
  } else if (-exponent > 38) {  // below 1e-38 of the mantissa's digits
    ns = 0;
  } else {
    const Wide scale = Pow10(-exponent);
    ns = mantissa / scale;
    if (mantissa % scale >= scale / 2) ++ns;  // half away from zero
  }
  if (ns > limit) return std::nullopt;
  if (negative) {
    return ns == limit ? std::numeric_limits<int64_t>::min()
                       : -static_cast<int64_t>(ns);
  }
  return static_cast<int64_t>(ns);
}

}  // namespace strag::ingest::kineto
