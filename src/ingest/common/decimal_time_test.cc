// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/decimal_time.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <random>
#include <string>

namespace strag::ingest {
namespace {

using trace::ExactTime;

ExactTime Seconds(std::string_view text) {
  const std::optional<ExactTime> t = DecimalTextToExactTime(text, 9);
  EXPECT_TRUE(t.has_value()) << text;
  return t.value_or(ExactTime{});
}

TEST(DecimalTimeTest, NanosecondsAndTheRest) {
  EXPECT_EQ(Seconds("0"), (ExactTime{0, 0}));
  EXPECT_EQ(Seconds("1.5"), (ExactTime{1'500'000'000, 0}));
  EXPECT_EQ(Seconds("0.0000000012"), (ExactTime{1, 200'000'000}));
  // 0.8486716747283936 s = 848671674 ns + 0.7283936 ns: rounds up.
  EXPECT_EQ(Seconds("0.8486716747283936"),
            (ExactTime{848'671'675, -271'606'400}));
  EXPECT_EQ(Seconds("-0.0000000012"), (ExactTime{-1, -200'000'000}));
  EXPECT_EQ(Seconds("3.0517578125e-05"), (ExactTime{30'518, -421'875'000}));
  // Ties go away from zero, as in the Kineto reader.
  EXPECT_EQ(Seconds("0.0000000005"), (ExactTime{1, -500'000'000}));
  EXPECT_EQ(Seconds("-0.0000000005"), (ExactTime{-1, 500'000'000}));
}

TEST(DecimalTimeTest, EpochDigitsSurvive) {
  // 1.7e9 s with 10 decimals: 20 significant digits, past a binary64.
  EXPECT_EQ(Seconds("1700000000.0123456789"),
            (ExactTime{1'700'000'000'012'345'679, -100'000'000}));
  EXPECT_EQ(Seconds("1700000000.000030517578125"),
            (ExactTime{1'700'000'000'000'030'518, -421'875'000}));
}

// The 64-bit fast path agrees with the general one ("e0" forces that).
TEST(DecimalTimeTest, FastPathAgreesWithTheGeneralOne) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    std::string text = (rng() % 4 == 0) ? "-" : "";
    const int int_digits = static_cast<int>(rng() % 12);
    const int frac_digits = static_cast<int>(rng() % 24) - 2;  // < 0: none
    for (int d = 0; d < int_digits; ++d)
      text += static_cast<char>('0' + rng() % 10);
    if (int_digits == 0) text += "0";
    if (frac_digits >= 0) {
      text += ".";
      for (int d = 0; d < frac_digits; ++d)
        text += static_cast<char>('0' + rng() % 10);
    }
    const auto fast = DecimalTextToExactTime(text, 9);
    const auto general = DecimalTextToExactTime(text + "e0", 9);
    ASSERT_EQ(fast.has_value(), general.has_value()) << text;
    if (fast) {
      EXPECT_EQ(*fast, *general) << text;
    }
  }
}

TEST(DecimalTimeTest, TextOfAnExactTimeReadsBack) {
  for (const char* text :
       {"0", "1.5", "-0.5", "0.0000000012", "1700000000.0123456789",
        "1700000000.000030517578125", "-9200000000", "0.000000000000000001"}) {
    const ExactTime t = Seconds(text);
    EXPECT_EQ(ExactTimeToSecondsText(t), text);
    EXPECT_EQ(Seconds(ExactTimeToSecondsText(t)), t);
  }
}

TEST(DecimalTimeTest, RejectsWhatIsNotANumberOrDoesNotFit) {
  for (const char* bad :
       {"", "-", ".", "1e", "1x", " 1", "1 ", "--1", "1e+", "9.3e9", "1e20"}) {
    EXPECT_FALSE(DecimalTextToExactTime(bad, 9).has_value()) << bad;
  }
}

// The rebase is exact: a binary32 start shifted by an integer number of
// seconds in decimal text, then rebased on the shift, rounds back to itself.
TEST(DecimalTimeTest, ShiftedBinary32StartsRebaseToThemselves) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> start(0.0f, 60.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = i < 100 ? std::ldexp(1.0f, -i / 4) : start(rng);
    char buf[64];
    // The shortest text of the binary64 value, as the published CSVs hold.
    const auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<double>(x),
                                 std::chars_format::fixed);
    ASSERT_EQ(r.ec, std::errc());
    const std::string text(buf, r.ptr);
    for (const char* shift : {"1000000", "1700000000"}) {
      // text + shift, in decimal: the integer part grows by `shift`.
      const size_t dot = text.find('.');
      const std::string int_part = text.substr(0, dot);
      const std::string frac = dot == std::string::npos ? "" : text.substr(dot);
      const std::string shifted =
          std::to_string(std::stoll(int_part) + std::stoll(shift)) + frac;
      const ExactTime t = Seconds(shifted);
      const ExactTime origin = Seconds(shift);
      EXPECT_EQ(trace::SecondsSinceF32(t, origin), x) << shifted;
    }
  }
}

}  // namespace
}  // namespace strag::ingest
