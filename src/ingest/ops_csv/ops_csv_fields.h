// SPDX-License-Identifier: Apache-2.0
// Field conversions of the ops CSV parser (internal to ingest/ops_csv):
// op type names, fast decimal integers, and the quoting of bad values in
// error messages.

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FIELDS_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FIELDS_H_

#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "trace/op_type.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

  // The fast path's Find: the op type named by the field at `p` (its text
  // up to the first ',', '\n' or '\r') and, through `*field_end`, that
  // delimiter, from 32 bytes read at once (the name compared in two 16-byte
  // steps, no call); nullopt when the field names none, or when this cannot
  // tell (fewer than 32 bytes before `end`, no delimiter among them): the
  // caller then scans the field and calls Find. A quote in the field never
  // matches a name.
  std::optional<trace::OpType> FindInBlock(const char* p, const char* end,
                                           const char** field_end) const {
#if defined(__SSE2__)
    if (end - p < 32) return std::nullopt;
    const __m128i low = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i high =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
    const auto delimiters = [](__m128i bytes) {
      const __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(',')),
                                    _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n'))),
                       _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\r')));
      return static_cast<uint32_t>(_mm_movemask_epi8(hit));
    };
    const uint32_t hits = delimiters(low) | (delimiters(high) << 16);
    if (hits == 0) return std::nullopt;
    const auto length = static_cast<uint32_t>(std::countr_zero(hits));
    const uint32_t in_name = (uint32_t{1} << length) - 1;  // length < 32
    for (uint32_t m = masks_[length]; m != 0; m &= m - 1) {
      const int i = std::countr_zero(m);
      const char* name = padded_[static_cast<size_t>(i)].data();
      const auto same = [](__m128i bytes, const char* expected) {
        return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(
            bytes,
            _mm_load_si128(reinterpret_cast<const __m128i*>(expected)))));
      };
      if ((~(same(low, name) | (same(high, name + 16) << 16)) & in_name) == 0) {
        *field_end = p + length;
        return static_cast<trace::OpType>(i);
      }
    }
#else
    (void)p;
    (void)end;
    (void)field_end;
#endif
    return std::nullopt;
  }

 private:
  std::array<std::string_view, trace::kNumOpTypes> names_{};
  std::array<uint32_t, 40> masks_{};
  // names_ zero-padded to 32 bytes (FindInBlock; longer ones never match
  // there, their length being past the block's).
  struct alignas(16) PaddedName : std::array<char, 32> {};
  std::array<PaddedName, 32> padded_{};
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

// A plain decimal `[-]digits[.digits]`: value = (negative ? -1 : 1) *
// mantissa * 10^-fraction, mantissa holding the significant digits.
struct PlainDecimal {
  bool negative = false;
  uint64_t mantissa = 0;
  int fraction = 0;  // digits after the point
};

// The number written by 8 digit values 0-9, one per byte (little-endian:
// the first digit lowest), by pairing them up with multiplications (SWAR):
// 3 multiplies instead of 8.
inline uint64_t DigitValuesNumber(uint64_t v) {
  v = (v * 10) + (v >> 8);  // pairs of digits in the even bytes
  v = (((v & 0x000000FF000000FF) * (100 + (1000000ULL << 32))) +
       (((v >> 16) & 0x000000FF000000FF) * (1 + (10000ULL << 32)))) >>
      32;
  return v & 0xFFFFFFFF;
}

inline constexpr uint64_t kPow10Upto8[] = {
    1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000};

// Appends the digits at `p` to `*mantissa` (wrapping past 19 digits, which
// the caller refuses) and returns their end: 8 at a time while 8 bytes
// before `end` are digits, then the last 0 to 7 of them in one step, with
// no loop and no branch on their count (which is as varied as the numbers:
// a loop's exit was a mispredicted branch for most of them).
inline const char* ScanDigits(const char* p, const char* end,
                              uint64_t* mantissa) {
  uint64_t m = *mantissa;
  while (end - p >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    const uint64_t x = v ^ 0x3030303030303030;  // '0'-'9' -> 0-9, others > 9
    // The high bit of every byte above 9. A carry out of a byte comes only
    // from one whose own bit is set (0x8A and above), so the lowest set
    // bit, the first byte that is not a digit, is exact.
    const uint64_t flags = ((x + 0x7676767676767676) | x) & 0x8080808080808080;
    if (flags != 0) {
      const auto count = static_cast<unsigned>(std::countr_zero(flags)) >> 3;
      // The digits moved to the top bytes; the zero bytes below them are
      // leading zeros (shifted twice: a shift by 64 is undefined, and none
      // is left of no digit).
      const uint64_t digits = (x << (63 - 8 * count)) << 1;
      *mantissa = m * kPow10Upto8[count] + DigitValuesNumber(digits);
      return p + count;
    }
    m = m * 100000000 + DigitValuesNumber(x);
    p += 8;
  }
  while (static_cast<unsigned>(*p - '0') < 10) {
    m = m * 10 + static_cast<unsigned>(*p - '0');
    ++p;
  }
  *mantissa = m;
  return p;
}

// Scans a plain decimal at `p` with at most 19 significant digits and at
// least one digit, and returns its end (the first byte that is neither a
// digit nor the first point), or nullptr for anything else (more digits, no
// digit), which the caller's general path decides. [p, end) must hold a
// byte after the number that is neither ('\n' at the latest), so the scan
// needs no other bound.
inline const char* ScanPlainDecimal(const char* p, const char* end,
                                    PlainDecimal* out) {
  out->negative = *p == '-';
  if (out->negative) ++p;
  uint64_t mantissa = 0;
  const char* const first = p;
  p = ScanDigits(p, end, &mantissa);
  size_t digits = static_cast<size_t>(p - first);
  int fraction = 0;
  if (*p == '.') {
    const char* const point = ++p;
    p = ScanDigits(p, end, &mantissa);
    fraction = static_cast<int>(p - point);
    digits += static_cast<size_t>(fraction);
  }
  if (digits == 0) return nullptr;
  if (digits > 19) {
    // Leading zeros do not count ("0.00000000000000000012" has 2 digits).
    size_t zeros = 0;
    for (const char* q = first; q != p && (*q == '0' || *q == '.'); ++q) {
      zeros += *q == '0';
    }
    if (digits - zeros > 19) return nullptr;  // the mantissa has wrapped
  }
  out->mantissa = mantissa;
  out->fraction = fraction;
  return p;
}

// The binary64 nearest to a plain decimal (what std::from_chars gives for
// its text [begin, end)).
// - Up to 19 digits and 27 decimals where long double is the x87 format
//   (every time of the published traces and of strag simulate): mantissa
//   and power of ten are exact in its 64-bit significand, so the quotient is
//   correctly rounded to 64 bits; rounding that to 53 bits gives the
//   correct binary64 unless the 64-bit quotient lies exactly on a binary64
//   midpoint (its low 11 bits 0x400), the only case where the exact value
//   may lie on the other side. One path whatever the mantissa's size: the
//   16- and 17-digit texts of the published traces fall on either side of
//   2^53 from one value to the next, and a branch on it was mispredicted.
// - Elsewhere (or on such a midpoint), a mantissa of at most 2^53 and at
//   most 22 decimals: both operands of the binary64 division are exact, so
//   its one rounding is the correct one (Clinger's fast path).
// - Anything else takes from_chars.
inline double PlainDecimalToDouble(const PlainDecimal& d, const char* begin,
                                   const char* end) {
  static constexpr double kPow10[] = {
      1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#if (defined(__x86_64__) || defined(__i386__)) && __LDBL_MANT_DIG__ == 64
  if (d.fraction <= 27) {
    static constexpr long double kPow10L[] = {
        1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
        1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
        1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
    const long double q =
        static_cast<long double>(d.mantissa) / kPow10L[d.fraction];
    uint64_t significand;
    std::memcpy(&significand, &q, sizeof significand);
    if ((significand & 0x7FF) != 0x400) {
      const auto value = static_cast<double>(q);
      return d.negative ? -value : value;
    }
  }
#endif
  if (d.mantissa <= (uint64_t{1} << 53) && d.fraction <= 22) {
    const double value = static_cast<double>(d.mantissa) / kPow10[d.fraction];
    return d.negative ? -value : value;
  }
  double value = 0;
  std::from_chars(begin, end, value);
  return value;
}

// Smallest accepted value of an integer column.
enum class IntMin : uint8_t {
  kAny,          // step ids may be any integer
  kNonNegative,  // ranks, seq_id, tokens
  kMinusOne,     // mc, mb_id, gmc: -1 means "none"
};

}  // namespace strag::ingest::ops_csv

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_FIELDS_H_
