// SPDX-License-Identifier: Apache-2.0
// The parser's fast path and its parallel parts against the general path
// (the tokenizer): on random texts full of the shapes the fast path must
// hand over (quotes, blank lines, CRLF, exponents, empty or out-of-range
// numbers, 20-digit times, unknown op types), every table and every error
// message must be the same, for any number of threads and any cut.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/ops_csv/ops_csv_fields.h"
#include "ingest/ops_csv/ops_csv_parser.h"
#include "ingest/ops_csv/ops_csv_test_util.h"
#include "trace/op_type.h"

namespace strag::ingest {
namespace {

struct ParseWay {
  bool general_only = false;
  bool baseline = false;  // the fast path's baseline copy (not AVX2 + BMI)
  bool key_runs = false;  // keys by runs (KeepKeysInRuns), then as columns
  size_t threads = 1;
  size_t piece_bytes = 0;  // 0: the whole text in one Feed
};

Result<trace::OpsTable> Parse(std::string_view csv, const ParseWay& way) {
  OpsCsvParser parser("trace.csv", csv.size(), kDefaultMaxLineBytes,
                      way.threads);
  if (way.general_only) parser.UseGeneralPathOnly();
  if (way.baseline) parser.UseBaselineFastPath();
  if (way.key_runs) parser.KeepKeysInRuns();
  const size_t step = way.piece_bytes == 0 ? csv.size() : way.piece_bytes;
  for (size_t at = 0; at < csv.size(); at += step) {
    const Status status = parser.Feed(csv.substr(at, step));
    if (!status.ok()) return status;
  }
  Result<trace::OpsTable> table = parser.Finish();
  if (table.ok() && way.key_runs) {
    if (!table->keys_in_runs || !table->rank.empty()) {
      return Internal("the keys are not in runs");  // (under the trial rows)
    }
    table->KeysToColumns();
  }
  return table;
}

// What the fast path must hand over to the general path, which then
// either takes it (blank lines, CRLF, quotes, exponents, an empty mc) or
// says what is wrong with it.
const char* const kOddNumbers[] = {
    "",   "-0", "-1", "-2", "007", "1e3", "+4", " 5", "99999999999999999999",
    "18446744073709551616", "2147483648", "-2147483648",
    "-9223372036854775808", "1.5", "\"3\"", "x", "3\r"};
const char* const kOddSeconds[] = {
    "1e-05", "-0.0", "-1.5", ".5", "5.", ".", "-", "inf", "nan", "",
    "0.000000000000000000000000000012", "12345678901234567890.5",
    "1234567890123456789", "9300000000", "-9300000000", "1.2.3", "\"0.25\"",
    "0.00000000000000000001234567890123456789", "1.5 "};
const char* const kOddTexts[] = {"\"a, \"\"q\"\"\nb\"", "\"\"", "a\"b", ""};

std::string Seconds(std::mt19937_64& rng) {
  char text[64];
  switch (rng() % 4) {
    case 0:  // a binary32 value printed as binary64 (the published traces)
      std::snprintf(text, sizeof text, "%.17g",
                    static_cast<double>(static_cast<float>(
                        static_cast<double>(rng() % 100000000) / 1e7)));
      break;
    case 1:  // nine decimals (strag simulate)
      std::snprintf(text, sizeof text, "%llu.%09llu",
                    static_cast<unsigned long long>(rng() % 100000),
                    static_cast<unsigned long long>(rng() % 1000000000));
      break;
    case 2:  // an epoch
      std::snprintf(text, sizeof text, "17%08llu.%09llu",
                    static_cast<unsigned long long>(rng() % 100000000),
                    static_cast<unsigned long long>(rng() % 1000000000));
      break;
    default:  // leading zeros and a few digits
      std::snprintf(text, sizeof text, "0.000%llu",
                    static_cast<unsigned long long>(rng() % 1000));
  }
  return text;
}

constexpr size_t kFields = 13;
constexpr size_t kOpTypeField = 4, kStartField = 5, kDurField = 6,
                 kTextField = 12;

// One field replaced in one row of a RandomCsv.
struct OddField {
  size_t row = SIZE_MAX;
  size_t field = 0;
  std::string text;
};

// A CSV of `rows` rows with the published columns plus tp_rank and a text
// column, with `odd` in place of one field; `shuffled`: the same fields in
// another column order (the text column first), which the fast path reads
// with a dispatch per field instead of its straight run of the published
// order.
std::string RandomCsv(uint64_t seed, size_t rows, const OddField& odd = {},
                      bool shuffled = false) {
  std::mt19937_64 rng(seed);
  static const char* const kTypes[] = {
      "forward-compute", "backward-compute",         "optimizer", "gc",
      "forward-send",    "separate-grads-all-reduce"};
  static const char* const kNames[kFields] = {
      "dp_rank", "stage", "rank",  "step", "optype",  "start_ts", "duration",
      "seq_id",  "mc",    "mb_id", "gmc",  "tp_rank", "name"};
  static constexpr size_t kIdentity[kFields] = {0, 1, 2, 3, 4,  5, 6,
                                                7, 8, 9, 10, 11, 12};
  static constexpr size_t kShuffled[kFields] = {12, 3, 1, 0, 2,  4, 6,
                                                5,  10, 9, 8, 7, 11};
  const size_t* order = shuffled ? kShuffled : kIdentity;
  std::string csv;
  for (size_t k = 0; k < kFields; ++k) {
    csv += (k > 0 ? "," : "") + std::string(kNames[order[k]]);
  }
  csv += '\n';
  std::string field[kFields];
  for (size_t i = 0; i < rows; ++i) {
    for (size_t f = 0; f < kFields; ++f) {
      if (f == kOpTypeField) {
        field[f] = kTypes[rng() % std::size(kTypes)];
      } else if (f == kStartField || f == kDurField) {
        field[f] = Seconds(rng);
      } else if (f == kTextField) {
        field[f] = "op" + std::to_string(rng() % 100);
      } else {
        field[f] = std::to_string(rng() % 5000);
      }
      if (i == odd.row && f == odd.field) field[f] = odd.text;
    }
    for (size_t k = 0; k < kFields; ++k) {
      if (k > 0) csv += ',';
      csv += field[order[k]];
    }
    csv += '\n';
  }
  return csv;
}

// Plain rows: the fast path takes every one, on every thread.
TEST(OpsCsvFastRowsTest, PlainRowsMatchTheGeneralPath) {
  for (const bool shuffled : {false, true}) {
    const std::string csv = RandomCsv(1, 40000, {}, shuffled);
    ASSERT_GT(csv.size(), 4 * OpsCsvParser::kMinPartBytes);
    const Result<trace::OpsTable> expected =
        Parse(csv, {.general_only = true});
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    EXPECT_EQ(expected->size(), 40000u);
    for (size_t threads : {1, 2, 3, 8}) {
      EXPECT_TRUE(SameOutcome(Parse(csv, {.threads = threads}), expected))
          << threads << " threads, shuffled " << shuffled;
      EXPECT_TRUE(SameOutcome(
          Parse(csv, {.threads = threads, .piece_bytes = 777777}), expected))
          << threads << " threads, pieces, shuffled " << shuffled;
      EXPECT_TRUE(SameOutcome(
          Parse(csv, {.baseline = true, .threads = threads}), expected))
          << threads << " threads, baseline copy, shuffled " << shuffled;
      EXPECT_TRUE(SameOutcome(
          Parse(csv, {.key_runs = true, .threads = threads}), expected))
          << threads << " threads, keys in runs, shuffled " << shuffled;
      EXPECT_TRUE(SameOutcome(
          Parse(csv,
                {.key_runs = true, .threads = threads, .piece_bytes = 77777}),
          expected))
          << threads << " threads, keys in runs, pieces, shuffled " << shuffled;
    }
  }
}

// One odd field at a time, in every column, in a small text and in one
// large enough for parallel parts: each outcome (a table, or the error
// with its line and column) is the general path's, whichever part of
// which thread meets it.
TEST(OpsCsvFastRowsTest, EachOddFieldMatchesTheGeneralPath) {
  std::vector<std::pair<size_t, std::string>> cases;
  for (size_t f = 0; f < kFields; ++f) {
    if (f == kOpTypeField) {
      for (const char* t :
           {"forward_compute", "gc ", "\"gc\"", "", "forward-computeX",
            "forward-comput", "Forward-compute", "back\"ward-compute",
            "optimizer-clip-main-grad-and-so-on-past-32-bytes", "gc\r"}) {
        cases.emplace_back(f, t);
      }
    } else if (f == kStartField || f == kDurField) {
      for (const char* t : kOddSeconds) cases.emplace_back(f, t);
    } else if (f == kTextField) {
      for (const char* t : kOddTexts) cases.emplace_back(f, t);
    } else {
      for (const char* t : kOddNumbers) cases.emplace_back(f, t);
    }
  }
  // Line shapes too: a blank line and a CRLF end before a row.
  cases.emplace_back(0, "\n0");
  cases.emplace_back(0, "\r\n0");
  cases.emplace_back(kTextField, "x\r");
  size_t errors = 0, tables = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    for (const size_t rows : {size_t{40}, c % 4 == 0 ? size_t{25000} : 0}) {
      if (rows == 0) continue;
      const OddField odd{.row = (c * 7919) % rows,
                         .field = cases[c].first,
                         .text = cases[c].second};
      // Every other case in the shuffled column order.
      const std::string csv = RandomCsv(c, rows, odd, c % 2 == 1);
      const Result<trace::OpsTable> expected =
          Parse(csv, {.general_only = true});
      (expected.ok() ? tables : errors) += 1;
      for (size_t threads : {size_t{1}, size_t{3}}) {
        ASSERT_TRUE(SameOutcome(Parse(csv, {.threads = threads}), expected))
            << "field " << odd.field << " = '" << odd.text << "' in row "
            << odd.row << " of " << rows << ", " << threads << " threads"
            << (c % 2 == 1 ? ", shuffled" : "");
      }
      ASSERT_TRUE(
          SameOutcome(Parse(csv, {.threads = 2, .piece_bytes = 3001}),
                      expected))
          << "field " << odd.field << " = '" << odd.text << "', pieces";
      ASSERT_TRUE(
          SameOutcome(Parse(csv, {.baseline = true, .threads = 2}), expected))
          << "field " << odd.field << " = '" << odd.text << "', baseline";
      ASSERT_TRUE(SameOutcome(
          Parse(csv, {.key_runs = true, .threads = 2, .piece_bytes = 3001}),
          expected))
          << "field " << odd.field << " = '" << odd.text << "', key runs";
    }
  }
  // Both kinds of outcome were checked, many times.
  EXPECT_GT(errors, 100u);
  EXPECT_GT(tables, 50u);
}

// FindInBlock (32 bytes at once) names what Find names, or leaves the
// field to it: every op type before each delimiter, at every distance from
// the end of the text, and what looks like one.
TEST(OpsCsvFastRowsTest, OpTypesFoundInABlockAreThoseFound) {
  const ops_csv::OpTypeLookup& lookup = ops_csv::GetOpTypeLookup();
  std::vector<std::string> fields;
  for (int i = 0; i < trace::kNumMegatronOpTypes; ++i) {
    const std::string name(trace::OpTypeName(static_cast<trace::OpType>(i)));
    fields.push_back(name);
    fields.push_back(name + "x");
    fields.push_back(name.substr(0, name.size() - 1));
    fields.push_back("\"" + name + "\"");
    fields.push_back(name.substr(0, 1) + "\"" + name.substr(1));
    fields.push_back(name + name);
  }
  fields.push_back("");
  size_t found = 0;
  for (const std::string& field : fields) {
    for (const char delimiter : {',', '\n', '\r'}) {
      for (size_t tail = 0; tail < 40; ++tail) {
        const std::string text =
            field + delimiter + std::string(tail, tail % 2 == 0 ? '0' : ',');
        const char* const end = text.data() + text.size();
        const char* field_end = nullptr;
        const std::optional<trace::OpType> fast =
            lookup.FindInBlock(text.data(), end, &field_end);
        const std::optional<trace::OpType> expected = lookup.Find(field);
        if (!fast) {
          // Left to Find: it must not name one where the block could tell.
          if (text.size() >= 32 && field.size() < 32) {
            EXPECT_FALSE(expected) << field << " + " << tail;
          }
          continue;
        }
        ++found;
        EXPECT_EQ(fast, expected) << field;
        EXPECT_EQ(field_end, text.data() + field.size()) << field;
      }
    }
  }
#if defined(__SSE2__)
  EXPECT_GT(found, 1000u);
#endif
}

// The odd texts that parse: the general path's values, quotes and blank
// lines and CRLF included, with the fast path taking the plain rows around
// them.
TEST(OpsCsvFastRowsTest, QuotesBlankLinesAndCrlfAmongPlainRows) {
  std::string csv = RandomCsv(7, 30000);
  std::string odd =
      "1,2,3,4,gc,0.5,0.25,0,-1,-1,-1,0,\"two\nlines\"\r\n\n"
      "1,2,3,4,gc,1e-3,0.25,0,,,,0,x\r\n";
  csv.insert(csv.find('\n', csv.size() / 3) + 1, odd);
  csv.insert(csv.find('\n', 2 * csv.size() / 3) + 1, odd);
  const Result<trace::OpsTable> expected =
      Parse(csv, {.general_only = true});
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  EXPECT_EQ(expected->size(), 30004u);
  for (size_t threads : {1, 2, 4}) {
    EXPECT_TRUE(SameOutcome(Parse(csv, {.threads = threads}), expected))
        << threads << " threads";
    EXPECT_TRUE(SameOutcome(
        Parse(csv, {.key_runs = true, .threads = threads, .piece_bytes = 4099}),
        expected))
        << threads << " threads, keys in runs";
  }
}

// The scanner of plain decimals: every digit count, point position, sign
// and leading zeros, against std::from_chars and the exact digits.
TEST(OpsCsvFastRowsTest, PlainDecimalScannerAndDouble) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) {
    std::string text = rng() % 4 == 0 ? "-" : "";
    const int digits = 1 + static_cast<int>(rng() % 24);
    const int point = static_cast<int>(rng() % (digits + 1));
    const bool has_point = rng() % 2;
    unsigned __int128 mantissa = 0;
    int significant = 0, fraction = 0;
    for (int d = 0; d < digits; ++d) {
      if (has_point && d == point) text += '.';
      const int digit = rng() % 3 == 0 ? 0 : static_cast<int>(rng() % 10);
      text += static_cast<char>('0' + digit);
      significant += mantissa != 0 || digit != 0;
      mantissa = mantissa * 10 + static_cast<unsigned>(digit);
      fraction += has_point && d >= point;
    }
    const std::string padded = text + ",\n........";
    ops_csv::PlainDecimal d;
    const char* end = ops_csv::ScanPlainDecimal(
        padded.data(), padded.data() + padded.size(), &d);
    if (significant > 19) {
      EXPECT_EQ(end, nullptr) << text;
      continue;
    }
    ASSERT_NE(end, nullptr) << text;
    ASSERT_EQ(static_cast<size_t>(end - padded.data()), text.size()) << text;
    EXPECT_EQ(d.mantissa, static_cast<uint64_t>(mantissa)) << text;
    EXPECT_EQ(d.fraction, fraction) << text;
    double expected = 0;
    std::from_chars(text.data(), text.data() + text.size(), expected);
    const double value =
        ops_csv::PlainDecimalToDouble(d, padded.data(), end);
    EXPECT_EQ(std::bit_cast<uint64_t>(value), std::bit_cast<uint64_t>(expected))
        << text;
  }
}

// ScanDigits (8 digits at a time, the last 1 to 7 in one step) against a
// digit-by-digit loop: runs of 0 to 24 digits followed by any byte (those
// next to '0' and '9', NUL, bytes of 0x80 and above), near the end or not.
TEST(OpsCsvFastRowsTest, DigitRunsBeforeAnyByte) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300000; ++i) {
    std::string text;
    const int digits = static_cast<int>(rng() % 25);
    for (int d = 0; d < digits; ++d) {
      text += static_cast<char>('0' + rng() % 10);
    }
    const int after = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < after; ++k) {
      const int pick = static_cast<int>(rng() % 6);
      const unsigned byte = pick == 0   ? static_cast<unsigned>(rng() % 256)
                            : pick == 1 ? 0x2F  // '/', one below '0'
                            : pick == 2 ? 0x3A  // ':', one above '9'
                            : pick == 3 ? 0x00
                            : pick == 4 ? 0x80 + static_cast<unsigned>(rng() % 128)
                                        : '0' + static_cast<unsigned>(rng() % 10);
      // The byte right after the run is not a digit; later ones may be.
      text += static_cast<char>(k == 0 && byte >= '0' && byte <= '9' ? ','
                                                                    : byte);
    }
    uint64_t expected = 7;
    size_t length = 0;
    while (length < text.size() && text[length] >= '0' && text[length] <= '9') {
      expected = expected * 10 + static_cast<uint64_t>(text[length] - '0');
      ++length;
    }
    uint64_t mantissa = 7;
    const char* end =
        ops_csv::ScanDigits(text.data(), text.data() + text.size(), &mantissa);
    ASSERT_EQ(static_cast<size_t>(end - text.data()), length) << text;
    ASSERT_EQ(mantissa, expected) << text;
  }
}

// The 17-digit texts of binary32 times (Python's repr of the float as a
// double, "2.6883304119110107"): the same binary64 as from_chars, and the
// values exactly on a binary64 midpoint (ties, to even) too.
TEST(OpsCsvFastRowsTest, SeventeenDigitTimesAndMidpoints) {
  const auto check = [](const std::string& text) {
    const std::string padded = text + ",\n........";
    ops_csv::PlainDecimal d;
    const char* end = ops_csv::ScanPlainDecimal(
        padded.data(), padded.data() + padded.size(), &d);
    ASSERT_NE(end, nullptr) << text;
    double expected = 0;
    std::from_chars(text.data(), text.data() + text.size(), expected);
    const double value = ops_csv::PlainDecimalToDouble(d, padded.data(), end);
    EXPECT_EQ(std::bit_cast<uint64_t>(value), std::bit_cast<uint64_t>(expected))
        << text;
  };
  std::mt19937_64 rng(17);
  char buffer[64];
  for (int i = 0; i < 200000; ++i) {
    // A binary32 in [1e-7, 1e4) written with 17 significant digits.
    const float f = std::ldexp(static_cast<float>(rng() % (1u << 24)),
                               static_cast<int>(rng() % 38) - 47);
    if (!(f >= 1e-7f && f < 1e4f)) continue;
    std::snprintf(buffer, sizeof buffer, "%.17g", static_cast<double>(f));
    if (std::string_view(buffer).find('e') != std::string_view::npos) continue;
    check(buffer);
  }
  // Binary64 midpoints with few digits: 2^53 + 1, 2^54 + 2 and their
  // neighbours, with and without a point.
  for (const char* text :
       {"9007199254740993", "9007199254740995", "18014398509481986",
        "18014398509481990", "900719925474099.3", "1801439850948198.6",
        "9007199254740993.0", "0.9007199254740993", "9007199254740992",
        "9007199254740994", "18014398509481985", "18014398509481987"}) {
    check(text);
  }
}

// PlainDecimalToDouble against from_chars for every fraction 0-19 and
// mantissas of every bit length (1 to 64 bits), the 19-digit extremes, and
// texts on and next to binary64 midpoints: k + 1/2 ulp for binary64s k with few
// decimal digits, which lie exactly on a tie, and the decimals one unit above
// and below them.
TEST(OpsCsvFastRowsTest, PlainDecimalToDoubleIsTheNearestBinary64) {
  const auto check = [](uint64_t mantissa, int fraction) {
    std::string digits = std::to_string(mantissa);
    if (static_cast<int>(digits.size()) <= fraction) {
      digits =
          std::string(static_cast<size_t>(fraction) + 1 - digits.size(), '0') +
          digits;
    }
    const std::string text =
        fraction == 0 ? digits
                      : digits.substr(0, digits.size() - fraction) + "." +
                            digits.substr(digits.size() - fraction);
    double expected = 0;
    std::from_chars(text.data(), text.data() + text.size(), expected);
    const ops_csv::PlainDecimal d{
        .negative = false, .mantissa = mantissa, .fraction = fraction};
    const double value = ops_csv::PlainDecimalToDouble(
        d, text.data(), text.data() + text.size());
    ASSERT_EQ(std::bit_cast<uint64_t>(value), std::bit_cast<uint64_t>(expected))
        << text << " = " << mantissa << "e-" << fraction;
  };
  std::mt19937_64 rng(19);
  for (int fraction = 0; fraction <= 19; ++fraction) {
    for (int bits = 1; bits <= 64; ++bits) {
      for (int i = 0; i < 400; ++i) {
        const uint64_t top = uint64_t{1} << (bits - 1);
        check(top | (rng() & (top - 1)), fraction);
      }
    }
    const uint64_t edges[] = {1,
                              9,
                              10,
                              9'999'999'999'999'999'999ULL,
                              10'000'000'000'000'000'000ULL,
                              ~uint64_t{0},
                              (uint64_t{1} << 53) - 1,
                              uint64_t{1} << 53,
                              (uint64_t{1} << 53) + 1,
                              uint64_t{1} << 63};
    for (const uint64_t m : edges) check(m, fraction);
  }
  // Ties: halfway between binary64s k and k + 1 (k of 53 bits) lies
  // (2k + 1) * 2^-j, the decimal (2k + 1) * 5^j * 10^-j, exact while it
  // fits the mantissa (j up to 4), also with trailing zeros.
  for (int i = 0; i < 20000; ++i) {
    const uint64_t k =
        (uint64_t{1} << 52) | (rng() & ((uint64_t{1} << 52) - 1));
    unsigned __int128 m = 2 * k + 1;
    for (int j = 0; j <= 19 && m <= ~uint64_t{0}; ++j, m *= 5) {
      for (unsigned __int128 z = m, t = 0; j + t <= 19 && z <= ~uint64_t{0};
           z *= 10, ++t) {
        const auto mantissa = static_cast<uint64_t>(z);
        const int fraction = j + static_cast<int>(t);
        check(mantissa, fraction);
        check(mantissa - 1, fraction);
        check(mantissa + 1, fraction);
      }
    }
  }
}

}  // namespace
}  // namespace strag::ingest
