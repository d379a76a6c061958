// SPDX-License-Identifier: Apache-2.0
// The structural characters of JSON text, 64 bytes at a time, as bit masks
// (bit i = byte i): the building block of TraceSplitter. Quotes and
// backslashes give the string state, carried from one block to the next;
// brackets and braces outside strings are the structure.

#ifndef STRAG_SRC_INGEST_KINETO_JSON_BLOCKS_H_
#define STRAG_SRC_INGEST_KINETO_JSON_BLOCKS_H_

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strag::ingest::kineto {

inline constexpr size_t kJsonBlockBytes = 64;

struct JsonBlockMasks {
  uint64_t quote = 0;      // '"'
  uint64_t backslash = 0;  // '\\'
  uint64_t open = 0;       // '{' or '['
  uint64_t close = 0;      // '}' or ']'
};

// Classifies the 64 bytes at `p`. '{' (0x7b) and '[' (0x5b) differ only in
// bit 0x20, and so do '}' and ']': one compare each after setting it.
inline JsonBlockMasks ClassifyJsonBlock(const char* p) {
  JsonBlockMasks m;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i case_bit = _mm_set1_epi8(0x20);
  for (int k = 0; k < 4; ++k) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i folded = _mm_or_si128(v, case_bit);
    const int shift = 16 * k;
    const auto bits = [](__m128i eq) {
      return static_cast<uint64_t>(
          static_cast<uint32_t>(_mm_movemask_epi8(eq)));
    };
    m.quote |= bits(_mm_cmpeq_epi8(v, quote)) << shift;
    m.backslash |= bits(_mm_cmpeq_epi8(v, backslash)) << shift;
    m.open |= bits(_mm_cmpeq_epi8(folded, open)) << shift;
    m.close |= bits(_mm_cmpeq_epi8(folded, close)) << shift;
  }
#else
  for (size_t i = 0; i < kJsonBlockBytes; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    switch (p[i]) {
      case '"':
        m.quote |= bit;
        break;
      case '\\':
        m.backslash |= bit;
        break;
      case '{':
      case '[':
        m.open |= bit;
        break;
      case '}':
      case ']':
        m.close |= bit;
        break;
      default:
        break;
    }
  }
#endif
  return m;
}

// Bit i = XOR of bits 0..i: turns quote positions into "inside a string".
inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// The string state between blocks: whether the next block starts inside a
// string, and whether its first byte is escaped by a backslash that ended
// the previous block.
struct JsonStringState {
  bool in_string = false;
  bool escape_next = false;

  // Returns the bytes of the block inside a string (an opening quote counts
  // as inside, a closing one as outside) and advances the state past it.
  // Backslashes escape the next byte; a run of them escapes every other one.
  // Backslashes are rare in traces, so they are walked one by one.
  uint64_t InsideStrings(const JsonBlockMasks& m) {
    uint64_t escaped = 0;
    uint64_t backslash = m.backslash;
    if (escape_next) {
      escaped = 1;
      backslash &= ~uint64_t{1};
    }
    escape_next = false;
    while (backslash != 0) {
      const int i = __builtin_ctzll(backslash);
      if (i == 63) {
        escape_next = true;
        break;
      }
      escaped |= uint64_t{2} << i;
      backslash &= ~(uint64_t{3} << i);  // this one and the byte it escapes
    }
    const uint64_t inside =
        PrefixXor(m.quote & ~escaped) ^ (in_string ? ~uint64_t{0} : 0);
    in_string = (inside >> 63) != 0;
    return inside;
  }
};

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_JSON_BLOCKS_H_
