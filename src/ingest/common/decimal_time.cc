// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/decimal_time.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace strag::ingest {
namespace {

using Wide = unsigned __int128;

// More significant digits than any timestamp has; later ones are dropped
// (they are far below the attosecond).
constexpr int kMaxDigits = 36;
constexpr int64_t kAttosPerNano = 1'000'000'000;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Wide Pow10(int n) {
  Wide p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// The digits of `text`: value = mantissa * 10^exponent (in the text's unit).
struct Digits {
  bool negative = false;
  Wide mantissa = 0;
  int exponent = 0;
};

std::optional<Digits> ScanDigits(std::string_view text) {
  Digits d;
  size_t i = 0;
  d.negative = i < text.size() && text[i] == '-';
  if (d.negative) ++i;
  int kept = 0;
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
    if (d.mantissa == 0 && c == '0') {
      if (fraction) --d.exponent;  // a leading zero after the point
      continue;
    }
    if (kept < kMaxDigits) {
      d.mantissa = d.mantissa * 10 + static_cast<unsigned>(c - '0');
      ++kept;
      if (fraction) --d.exponent;
    } else if (!fraction) {
      ++d.exponent;  // an integer digit that does not fit: scale instead
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
    d.exponent += exp_negative ? -value : value;
  }
  if (i != text.size()) return std::nullopt;
  return d;
}

constexpr uint64_t kPow10[] = {1,
                               10,
                               100,
                               1'000,
                               10'000,
                               100'000,
                               1'000'000,
                               10'000'000,
                               100'000'000,
                               1'000'000'000,
                               10'000'000'000,
                               100'000'000'000,
                               1'000'000'000'000,
                               10'000'000'000'000,
                               100'000'000'000'000,
                               1'000'000'000'000'000,
                               10'000'000'000'000'000,
                               100'000'000'000'000'000,
                               1'000'000'000'000'000'000,
                               10'000'000'000'000'000'000u};

// The common case in 64-bit arithmetic: seconds written as plain
// `[-]digits[.digits]` with at most 19 digits in all (every binary32 and
// binary64 text of the published traces, an epoch with 9 decimals);
// nullopt sends the text to the general path.
std::optional<trace::ExactTime> PlainSeconds(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  uint64_t mantissa = 0;
  int digits = 0, fraction = -1;  // fraction: digits after the point
  bool any = false;
  for (; p != end; ++p) {
    if (*p == '.' && fraction < 0) {
      fraction = 0;
      continue;
    }
    const auto digit = static_cast<unsigned>(*p - '0');
    if (digit > 9) return std::nullopt;  // an exponent or junk
    any = true;
    if (mantissa != 0 || digit != 0) {
      if (++digits > 19) return std::nullopt;
      mantissa = mantissa * 10 + digit;
    }
    if (fraction >= 0) ++fraction;
  }
  if (!any) return std::nullopt;
  return PlainDecimalSecondsToExactTime(negative, mantissa,
                                        std::max(fraction, 0));
}

}  // namespace

std::optional<trace::ExactTime> PlainDecimalSecondsToExactTime(
    bool negative, uint64_t mantissa, int fraction) {
  if (fraction > 28) return std::nullopt;
  const int k = fraction - 9;  // value = mantissa e-k ns
  uint64_t ns = 0;
  int64_t rem_as = 0;
  if (k <= 0) {
    const uint64_t scale = kPow10[-k];
    if (mantissa >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / scale) {
      return std::nullopt;
    }
    ns = mantissa * scale;
  } else {
    const uint64_t scale = kPow10[k];
    ns = mantissa / scale;
    const uint64_t rest = mantissa % scale;  // in units of 1e-k ns
    rem_as = k <= 9 ? static_cast<int64_t>(rest * kPow10[9 - k])
                    : static_cast<int64_t>(rest / kPow10[k - 9]);
  }
  // Half away from zero, without a branch (taken for half of all values).
  const bool up = rem_as >= kAttosPerNano / 2;
  ns += up;
  rem_as -= up ? kAttosPerNano : 0;
  if (ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  const auto signed_ns = static_cast<int64_t>(ns);
  return trace::ExactTime{
      .ns = negative ? -signed_ns : signed_ns,
      .rem_as = static_cast<int32_t>(negative ? -rem_as : rem_as)};
}

std::optional<trace::ExactTime> DecimalTextToExactTime(std::string_view text,
                                                       int ns_exponent) {
  if (ns_exponent == 9) {
    if (const std::optional<trace::ExactTime> fast = PlainSeconds(text)) {
      return fast;
    }
  }
  std::optional<Digits> d = ScanDigits(text);
  if (!d) return std::nullopt;
  const int exponent = d->exponent + ns_exponent;  // in nanoseconds now
  const Wide limit = static_cast<Wide>(std::numeric_limits<int64_t>::max()) +
                     (d->negative ? 1 : 0);
  Wide ns = 0;
  int64_t rem_as = 0;  // of the magnitude, before rounding: [0, 1e9)
  if (d->mantissa == 0) {
    ns = 0;
  } else if (exponent >= 0) {
    if (exponent > 19) return std::nullopt;  // >= 1e19 ns does not fit
    const Wide scale = Pow10(exponent);
    if (d->mantissa > limit / scale) return std::nullopt;
    ns = d->mantissa * scale;
  } else if (-exponent > 38) {  // below 1e-38 ns of the mantissa's digits
    ns = 0;
  } else {
    const Wide scale = Pow10(-exponent);
    ns = d->mantissa / scale;
    const Wide rest = d->mantissa % scale;  // in units of 10^exponent ns
    // rest * 10^(exponent + 9) attoseconds, below 1e9.
    rem_as = exponent + 9 >= 0
                 ? static_cast<int64_t>(rest * Pow10(exponent + 9))
                 : static_cast<int64_t>(rest / Pow10(-(exponent + 9)));
  }
  if (rem_as >= kAttosPerNano / 2) {  // half away from zero
    ++ns;
    rem_as -= kAttosPerNano;
  }
  if (ns > limit) return std::nullopt;
  trace::ExactTime t;
  t.rem_as = static_cast<int32_t>(d->negative ? -rem_as : rem_as);
  if (d->negative) {
    t.ns = ns == limit ? std::numeric_limits<int64_t>::min()
                       : -static_cast<int64_t>(ns);
  } else {
    t.ns = static_cast<int64_t>(ns);
  }
  return t;
}

std::string ExactTimeToSecondsText(trace::ExactTime t) {
  // The value in attoseconds: |ns| < 2^63 and |rem| <= 5e8 fit an int128.
  const __int128 as = static_cast<__int128>(t.ns) * kAttosPerNano + t.rem_as;
  Wide magnitude = as < 0 ? static_cast<Wide>(-as) : static_cast<Wide>(as);
  const Wide scale = Pow10(18);
  Wide seconds = magnitude / scale;
  Wide fraction = magnitude % scale;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + seconds % 10));
    seconds /= 10;
  } while (seconds != 0);
  std::string out = as < 0 ? "-" + digits : digits;
  if (fraction != 0) {
    std::string frac(18, '0');
    for (int i = 17; i >= 0; --i) {
      frac[static_cast<size_t>(i)] = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out;
}

}  // namespace strag::ingest
