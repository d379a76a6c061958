// SPDX-License-Identifier: Apache-2.0
// ExactTime: a timestamp exact to the attosecond, for inputs whose time
// text carries more digits than int64 nanoseconds hold.
//
// The ops CSV writes binary32 seconds as decimal text; the published method
// rounds each start to binary32 after the per-step rebase, so a trace whose
// origin is far from zero (an epoch of 1.7e9 s, where binary32 spacing is
// 128 s and binary64 spacing 0.24 us) must be rebased on the exact text, not
// on either float. ExactTime keeps the text's value as the nearest
// nanosecond plus the signed attoseconds left over.

#ifndef STRAG_SRC_TRACE_EXACT_TIME_H_
#define STRAG_SRC_TRACE_EXACT_TIME_H_

#include <cstdint>
#include <tuple>

namespace strag::trace {

struct ExactTime {
  int64_t ns = 0;      // the value rounded to the nearest nanosecond
  int32_t rem_as = 0;  // value - ns, in attoseconds: [-5e8, 5e8]

  friend bool operator==(const ExactTime&, const ExactTime&) = default;
  // Lexicographic order is the order of the values: |rem_as| <= half a ns.
  friend bool operator<(const ExactTime& a, const ExactTime& b) {
    return std::tie(a.ns, a.rem_as) < std::tie(b.ns, b.rem_as);
  }
};

// `t - origin` in seconds, rounded to binary64 and then to binary32, as the
// published method rounds its parsed text. The result is within a few binary64
// roundings of the exact difference, so it rounds to the same binary32 as
// the exact difference unless that lies within ~2e-16 (relative) of a
// binary32 midpoint; a shifted binary32 value never does.
float SecondsSinceF32(ExactTime t, ExactTime origin);

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_EXACT_TIME_H_
