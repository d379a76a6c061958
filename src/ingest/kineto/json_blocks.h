// SPDX-License-Identifier: Apache-2.0
// The structural characters of JSON text, 64 bytes at a time, as bit masks
// (bit i = byte i): the building block of TraceSplitter. Quotes and
// backslashes give the string state, carried from one block to the next;
// brackets and braces outside strings are the structure.

#ifndef STRAG_SRC_INGEST_KINETO_JSON_BLOCKS_H_
#define STRAG_SRC_INGEST_KINETO_JSON_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// x86-64 CPUs since 2013 have AVX2, PCLMUL and POPCNT, but a build for
// baseline x86-64 may not use them: the kernels below that do are compiled
// for them alone (target attributes) and chosen at run time, so the binary
// still runs on any x86-64.
#if defined(__x86_64__) && defined(__GNUC__)
#define STRAG_JSON_BLOCKS_X86 1
#include <immintrin.h>
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
  uint64_t InsideStrings(const JsonBlockMasks& m) {
    return Inside(PrefixXor(UnescapedQuotes(m.quote, m.backslash)));
  }

  // The quotes of a block that are not escaped; advances escape_next.
  // Backslashes escape the next byte; a run of them escapes every other one.
  // Backslashes are rare in traces, so they are walked one by one.
  uint64_t UnescapedQuotes(uint64_t quote, uint64_t backslash) {
    uint64_t escaped = 0;
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
    return quote & ~escaped;
  }

  // From the prefix XOR of the unescaped quotes: the bytes inside a string;
  // advances in_string.
  uint64_t Inside(uint64_t quote_prefix_xor) {
    const uint64_t inside = quote_prefix_xor ^ (in_string ? ~uint64_t{0} : 0);
    in_string = (inside >> 63) != 0;
    return inside;
  }
};

// The brackets of one block outside strings, and how many of each.
struct BlockStructure {
  uint64_t opens = 0;
  uint64_t closes = 0;
  int32_t open_count = 0;
  int32_t close_count = 0;
};

// The code that classifies blocks: the portable one, or one for a CPU
// feature set (see BestBlockKernel). All give the same BlockStructure.
enum class BlockKernel : uint8_t { kPortable, kAvx2, kAvx512 };

// Classifies the `blocks` whole blocks at `p` into out[0, blocks) and
// advances `strings` past them; returns whether they hold a backslash (if
// not, no string in them has an escape). The portable kernel: SSE2 at
// most, and a software popcount on baseline x86-64.
inline bool ClassifyBlocksPortable(const char* p, size_t blocks,
                                   JsonStringState* strings,
                                   BlockStructure* out) {
  JsonStringState state = *strings;  // in registers, not through out
  uint64_t backslashes = 0;
  for (size_t b = 0; b < blocks; ++b, p += kJsonBlockBytes) {
    const JsonBlockMasks m = ClassifyJsonBlock(p);
    backslashes |= m.backslash;
    const uint64_t inside = state.InsideStrings(m);
    BlockStructure& s = out[b];
    s.opens = m.open & ~inside;
    s.closes = m.close & ~inside;
    s.open_count = __builtin_popcountll(s.opens);
    s.close_count = __builtin_popcountll(s.closes);
  }
  *strings = state;
  return backslashes != 0;
}

#if defined(STRAG_JSON_BLOCKS_X86)
#define STRAG_TARGET_AVX2 __attribute__((target("avx2,bmi,pclmul,popcnt")))
#define STRAG_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,bmi,pclmul,popcnt")))

// Prefix XOR in one carry-less multiply by all ones.
STRAG_TARGET_AVX2 inline uint64_t ClmulPrefixXor(uint64_t x) {
  const __m128i product = _mm_clmulepi64_si128(
      _mm_set_epi64x(0, static_cast<int64_t>(x)), _mm_set1_epi8(-1), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
}

STRAG_TARGET_AVX2 inline uint64_t Mask64(__m256i lo, __m256i hi) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(lo)) |
         (uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(hi))} << 32);
}

// ClassifyBlocksPortable with 32-byte compares, a carry-less multiply for
// the prefix XOR and the popcount instruction.
STRAG_TARGET_AVX2 inline bool ClassifyBlocksAvx2(const char* p, size_t blocks,
                                                 JsonStringState* strings,
                                                 BlockStructure* out) {
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i open = _mm256_set1_epi8('{');
  const __m256i close = _mm256_set1_epi8('}');
  const __m256i case_bit = _mm256_set1_epi8(0x20);  // '[' -> '{', ']' -> '}'
  JsonStringState state = *strings;  // in registers, not through out
  uint64_t backslashes = 0;
  for (size_t b = 0; b < blocks; ++b, p += kJsonBlockBytes) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hi =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i lo_folded = _mm256_or_si256(lo, case_bit);
    const __m256i hi_folded = _mm256_or_si256(hi, case_bit);
    const uint64_t backslash_mask = Mask64(_mm256_cmpeq_epi8(lo, backslash),
                                           _mm256_cmpeq_epi8(hi, backslash));
    backslashes |= backslash_mask;
    const uint64_t quotes = state.UnescapedQuotes(
        Mask64(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote)),
        backslash_mask);
    const uint64_t inside = state.Inside(ClmulPrefixXor(quotes));
    BlockStructure& s = out[b];
    s.opens = Mask64(_mm256_cmpeq_epi8(lo_folded, open),
                     _mm256_cmpeq_epi8(hi_folded, open)) &
              ~inside;
    s.closes = Mask64(_mm256_cmpeq_epi8(lo_folded, close),
                      _mm256_cmpeq_epi8(hi_folded, close)) &
               ~inside;
    s.open_count = __builtin_popcountll(s.opens);
    s.close_count = __builtin_popcountll(s.closes);
  }
  *strings = state;
  return backslashes != 0;
}

STRAG_TARGET_AVX512 inline uint64_t ClmulPrefixXor512(uint64_t x) {
  const __m128i product = _mm_clmulepi64_si128(
      _mm_set_epi64x(0, static_cast<int64_t>(x)), _mm_set1_epi8(-1), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
}

// The same with one 64-byte load and four compares per block.
STRAG_TARGET_AVX512 inline bool ClassifyBlocksAvx512(const char* p,
                                                     size_t blocks,
                                                     JsonStringState* strings,
                                                     BlockStructure* out) {
  const __m512i quote = _mm512_set1_epi8('"');
  const __m512i backslash = _mm512_set1_epi8('\\');
  const __m512i open = _mm512_set1_epi8('{');
  const __m512i close = _mm512_set1_epi8('}');
  const __m512i case_bit = _mm512_set1_epi8(0x20);
  JsonStringState state = *strings;  // in registers, not through out
  uint64_t backslashes = 0;
  for (size_t b = 0; b < blocks; ++b, p += kJsonBlockBytes) {
    const __m512i v = _mm512_loadu_si512(p);
    const __m512i folded = _mm512_or_si512(v, case_bit);
    const uint64_t backslash_mask = _mm512_cmpeq_epi8_mask(v, backslash);
    backslashes |= backslash_mask;
    const uint64_t quotes =
        state.UnescapedQuotes(_mm512_cmpeq_epi8_mask(v, quote), backslash_mask);
    const uint64_t inside = state.Inside(ClmulPrefixXor512(quotes));
    BlockStructure& s = out[b];
    s.opens = _mm512_cmpeq_epi8_mask(folded, open) & ~inside;
    s.closes = _mm512_cmpeq_epi8_mask(folded, close) & ~inside;
    s.open_count = __builtin_popcountll(s.opens);
    s.close_count = __builtin_popcountll(s.closes);
  }
  *strings = state;
  return backslashes != 0;
}
#endif  // STRAG_JSON_BLOCKS_X86

// Whether this CPU (and its operating system) runs `kernel`.
inline bool CpuRuns(BlockKernel kernel) {
#if defined(STRAG_JSON_BLOCKS_X86)
  switch (kernel) {
    case BlockKernel::kPortable:
      return true;
    case BlockKernel::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("pclmul") &&
             __builtin_cpu_supports("popcnt");
    case BlockKernel::kAvx512:
      return CpuRuns(BlockKernel::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw");
  }
  return false;
#else
  return kernel == BlockKernel::kPortable;
#endif
}

// The fastest kernel this CPU runs, found once.
inline BlockKernel BestBlockKernel() {
  static const BlockKernel best = [] {
#if defined(STRAG_JSON_BLOCKS_X86)
    __builtin_cpu_init();  // in case this runs before libgcc's constructor
#endif
    if (CpuRuns(BlockKernel::kAvx512)) return BlockKernel::kAvx512;
    if (CpuRuns(BlockKernel::kAvx2)) return BlockKernel::kAvx2;
    return BlockKernel::kPortable;
  }();
  return best;
}

// ClassifyBlocksPortable with `kernel`, which the CPU must run.
inline bool ClassifyBlocks(BlockKernel kernel, const char* p, size_t blocks,
                           JsonStringState* strings, BlockStructure* out) {
#if defined(STRAG_JSON_BLOCKS_X86)
  if (kernel == BlockKernel::kAvx512) {
    return ClassifyBlocksAvx512(p, blocks, strings, out);
  }
  if (kernel == BlockKernel::kAvx2) {
    return ClassifyBlocksAvx2(p, blocks, strings, out);
  }
#endif
  return ClassifyBlocksPortable(p, blocks, strings, out);
}

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_JSON_BLOCKS_H_
