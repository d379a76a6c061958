// SPDX-License-Identifier: Apache-2.0
#include "trace/exact_time.h"

namespace strag::trace {

float SecondsSinceF32(ExactTime t, ExactTime origin) {
  // int128: two starts of +-9.2e9 s are 1.8e19 ns apart, past int64.
  const __int128 dns = static_cast<__int128>(t.ns) - origin.ns;
  const int64_t drem = int64_t{t.rem_as} - origin.rem_as;
  // 1e9 and 1e18 are exact binary64 values, so each quotient is correctly
  // rounded (dns below 2^53); the sum rounds once more.
  const double seconds =
      static_cast<double>(dns) / 1e9 + static_cast<double>(drem) / 1e18;
  return static_cast<float>(seconds);
}

}  // namespace strag::trace
