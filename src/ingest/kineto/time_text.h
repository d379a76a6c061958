// SPDX-License-Identifier: Apache-2.0
// Trace timestamps as text -> int64 nanoseconds, exactly.
//
// Chrome-trace `ts` and `dur` are microseconds, written with up to three
// decimals when the profiler has nanosecond resolution
// ("1712195495519695.812"). A double holds only ~16 significant digits, so
// at 1.7e15 us the nanoseconds would be lost; the digits are converted as
// integers instead.

#ifndef STRAG_SRC_INGEST_KINETO_TIME_TEXT_H_
#define STRAG_SRC_INGEST_KINETO_TIME_TEXT_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace strag::ingest::kineto {

// The JSON number `text` (microseconds: "-12", "4458677009853.422",
// "1.5e3") in nanoseconds. Digits below the nanosecond are rounded half
// away from zero ("0.0005" -> 1). nullopt when `text` is not a number or
// the result does not fit an int64.
std::optional<int64_t> MicrosTextToNanos(std::string_view text);

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_TIME_TEXT_H_
