// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/time_text.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

#include "ingest/common/decimal_time.h"

namespace strag::ingest::kineto {
namespace {

TEST(MicrosTextToNanosTest, IntegersAndDecimals) {
  EXPECT_EQ(MicrosTextToNanos("0"), 0);
  EXPECT_EQ(MicrosTextToNanos("12"), 12000);
  EXPECT_EQ(MicrosTextToNanos("-12"), -12000);
  EXPECT_EQ(MicrosTextToNanos("68.0"), 68000);
  EXPECT_EQ(MicrosTextToNanos("0.5"), 500);
  EXPECT_EQ(MicrosTextToNanos("2.370"), 2370);
  EXPECT_EQ(MicrosTextToNanos("0.001"), 1);
  EXPECT_EQ(MicrosTextToNanos("-0.473"), -473);
  EXPECT_EQ(MicrosTextToNanos("007"), 7000);
}

// The digits of real Kineto timestamps, which a double cannot hold.
TEST(MicrosTextToNanosTest, ExactAtEpochScale) {
  EXPECT_EQ(MicrosTextToNanos("4458677009853.422"), 4458677009853422);
  EXPECT_EQ(MicrosTextToNanos("1712195495519695.8"), 1712195495519695800);
  EXPECT_EQ(MicrosTextToNanos("1712195495519689.047"), 1712195495519689047);
  EXPECT_EQ(MicrosTextToNanos("1682725898236567"), 1682725898236567000);
}

// The fast path reads 8 digits at a time: every length of the integer
// part, and bytes just outside the digits, against the exact slow path.
TEST(MicrosTextToNanosTest, EveryDigitCount) {
  const std::string digits = "12345678901234567890";
  for (size_t n = 1; n <= digits.size(); ++n) {
    const std::string whole = digits.substr(0, n);
    for (const std::string& text :
         {whole, whole + ".5", whole + ".047", whole + ".0471", "-" + whole,
          whole + ":", whole + "/", whole + "e1"}) {
      const std::optional<trace::ExactTime> exact =
          DecimalTextToExactTime(text, 3);
      const std::optional<int64_t> expected =
          exact ? std::optional<int64_t>(exact->ns) : std::nullopt;
      EXPECT_EQ(MicrosTextToNanos(text), expected) << text;
    }
  }
}

TEST(MicrosTextToNanosTest, RoundsBelowTheNanosecondHalfAwayFromZero) {
  EXPECT_EQ(MicrosTextToNanos("0.0004"), 0);
  EXPECT_EQ(MicrosTextToNanos("0.0005"), 1);
  EXPECT_EQ(MicrosTextToNanos("1.23449"), 1234);
  EXPECT_EQ(MicrosTextToNanos("1.2345"), 1235);
  EXPECT_EQ(MicrosTextToNanos("-1.2345"), -1235);
  EXPECT_EQ(MicrosTextToNanos("0.000000000000000000000000000000000000000001"),
            0);
}

TEST(MicrosTextToNanosTest, Exponents) {
  EXPECT_EQ(MicrosTextToNanos("1.5e3"), 1500000);
  EXPECT_EQ(MicrosTextToNanos("1.5E+3"), 1500000);
  EXPECT_EQ(MicrosTextToNanos("25e-3"), 25);
  EXPECT_EQ(MicrosTextToNanos("1.712195495519695812e15"), 1712195495519695812);
  EXPECT_EQ(MicrosTextToNanos("1e-99999"), 0);
}

TEST(MicrosTextToNanosTest, RejectsWhatIsNoNumberOrDoesNotFit) {
  for (const char* bad : {"", "-", "abc", "1x", "1e", "1e+", "nan", "--1",
                          "1.2.3", " 1", "1 ", "0x10"}) {
    EXPECT_EQ(MicrosTextToNanos(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(MicrosTextToNanos("9223372036854775.807"),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(MicrosTextToNanos("9223372036854775.808"), std::nullopt);
  EXPECT_EQ(MicrosTextToNanos("-9223372036854775.808"),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(MicrosTextToNanos("1e30"), std::nullopt);
  EXPECT_EQ(MicrosTextToNanos("123456789012345678901234567890123456789012"),
            std::nullopt);
}

}  // namespace
}  // namespace strag::ingest::kineto
