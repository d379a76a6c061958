// SPDX-License-Identifier: Apache-2.0
// Decimal time text -> trace::ExactTime, exactly.
//
// A binary64 holds ~16 significant digits: an epoch in microseconds
// ("1712195495519695.812") or in seconds with binary32 digits
// ("1700000000.0123456789") loses the nanoseconds on the way through a
// double. The digits are converted as integers instead.

#ifndef STRAG_SRC_INGEST_COMMON_DECIMAL_TIME_H_
#define STRAG_SRC_INGEST_COMMON_DECIMAL_TIME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trace/exact_time.h"

namespace strag::ingest {

// The number `text` ("-12", "4458677009853.422", "1.5e3") in units of
// 10^ns_exponent nanoseconds (3: microseconds, 9: seconds), as the nearest
// nanosecond (ties away from zero) plus the attoseconds left over; digits
// below the attosecond and past the 36th significant one are dropped.
// nullopt when `text` is not a number (a sign, digits, an optional point and
// exponent; no spaces) or the nanoseconds do not fit an int64.
std::optional<trace::ExactTime> DecimalTextToExactTime(std::string_view text,
                                                       int ns_exponent);

// The fast path of the above for seconds already scanned as a plain decimal:
// value = (negative ? -1 : 1) * mantissa * 10^-fraction s, with mantissa the
// significant digits (at most 19) and fraction the digits after the point.
// nullopt when fraction > 28 or the nanoseconds do not fit an int64.
std::optional<trace::ExactTime> PlainDecimalSecondsToExactTime(
    bool negative, uint64_t mantissa, int fraction);

// The inverse for seconds: `t` as the shortest plain decimal of seconds
// that is exactly its value ("1700000000.0123456789", "-0.5", "0"), so that
// DecimalTextToExactTime(text, 9) gives `t` back.
std::string ExactTimeToSecondsText(trace::ExactTime t);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_DECIMAL_TIME_H_
