// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "ingest/ops_csv/ops_csv_reader.h"
#include "ingest/ops_csv/ops_csv_test_util.h"

namespace strag::ingest {
namespace {


// Parses `pieces` in order with one OpsCsvParser.
Result<trace::OpsTable> ParsePieces(const std::vector<std::string_view>& pieces,
                                    size_t hint = 0) {
  OpsCsvParser parser("trace.csv", hint);
  for (std::string_view piece : pieces) {
    const Status status = parser.Feed(piece);
    if (!status.ok()) return status;
  }
  return parser.Finish();
}

// Every outcome of parsing `csv` cut in two at every position, and in three
// at every pair of positions when `pairs`, equals ParseOpsCsv's.
void ExpectSameForEveryCut(std::string_view csv, bool pairs) {
  const Result<trace::OpsTable> expected = ParseOpsCsv(csv, "trace.csv");
  for (size_t i = 0; i <= csv.size(); ++i) {
    ASSERT_TRUE(
        SameOutcome(ParsePieces({csv.substr(0, i), csv.substr(i)}), expected))
        << "cut at " << i << " of:\n"
        << csv;
    if (!pairs) continue;
    for (size_t j = i; j <= csv.size(); ++j) {
      ASSERT_TRUE(SameOutcome(
          ParsePieces({csv.substr(0, i), csv.substr(i, j - i), csv.substr(j)}),
          expected))
          << "cuts at " << i << " and " << j << " of:\n"
          << csv;
    }
  }
}

// Cuts inside a field, inside a quoted field (also inside its line break
// and between its doubled quotes), between `\r` and `\n`, inside the byte
// order mark and on line boundaries all give the table of the whole text.
TEST(OpsCsvParserTest, AnyCutGivesTheSameTable) {
  const Result<trace::OpsTable> whole = ParseOpsCsv(kTrickyCsv, "trace.csv");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ(whole->size(), 5u);
  ASSERT_EQ(whole->extra.size(), 1u);
  EXPECT_EQ(whole->extra[0][1], "two\r\nlines \"q\"");
  ExpectSameForEveryCut(kTrickyCsv, /*pairs=*/true);
}

// One byte at a time, and empty pieces in between, change nothing.
TEST(OpsCsvParserTest, BytePiecesAndEmptyPieces) {
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < kTrickyCsv.size(); ++i) {
    pieces.push_back(kTrickyCsv.substr(i, 1));
    pieces.push_back(std::string_view());
  }
  EXPECT_TRUE(
      SameOutcome(ParsePieces(pieces), ParseOpsCsv(kTrickyCsv, "trace.csv")));
}

// Errors on lines that a cut splits keep their line, column and wording,
// including those that re-read the record (field counts) and those found
// only at the end of the text (an unclosed quote).
TEST(OpsCsvParserTest, AnyCutGivesTheSameError) {
  const std::string header =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,name\n";
  const std::string good = "0,0,0,1,gc,0.5,0.25,0,x\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {header + good + good + "0,0,0,1,gc,0,abc,1,y\n" + good,
       "trace.csv: line 4: column 'duration': \"abc\" is not a number"},
      {header + good + "0,0,0,1,gc,0,0,0,\"a\nb\",extra\n" + good,
       "trace.csv: line 3: expected 9 fields as in the header, found 10"},
      {header + good + "0,0,0,1,gc,0,0,0,\"open\n" + good,
       "trace.csv: line 3: column 'name': quoted field has no closing quote"},
      {header + good + "0,0,0,1,gc,0,0,0,\"a\"b\n",
       "trace.csv: line 3: column 'name': unexpected text after the closing "
       "quote"},
      {header + good + "0,0,0,1,gc,0,0,0",
       "trace.csv: line 3: expected 9 fields as in the header, found 8"},
      {"\n\r\n", "trace.csv: empty file (expected a header line)"},
      {"dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,\"ra\nnk\","
       "rank\n",
       "trace.csv: line 1: duplicate column 'rank'"},
      {"dp_rank,stage\n", "trace.csv: missing required column 'rank'"},
  };
  for (const auto& [csv, message] : cases) {
    const Result<trace::OpsTable> whole = ParseOpsCsv(csv, "trace.csv");
    ASSERT_FALSE(whole.ok()) << csv;
    EXPECT_EQ(whole.status().message().substr(0, message.size()), message);
    ExpectSameForEveryCut(csv, /*pairs=*/false);
  }
}

// A quoted header field may hold a line break too.
TEST(OpsCsvParserTest, QuotedHeaderAcrossPieces) {
  const std::string csv =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,\"na\nme\"\n"
      "0,0,0,1,gc,0,0,0,v\n";
  const Result<trace::OpsTable> whole = ParseOpsCsv(csv, "trace.csv");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(whole->extra[0].name, "na\nme");
  ExpectSameForEveryCut(csv, /*pairs=*/true);
}

// The first error is sticky: later pieces do not hide it.
TEST(OpsCsvParserTest, ErrorIsSticky) {
  OpsCsvParser parser("trace.csv", 0);
  const Status first = parser.Feed(
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id\n"
      "0,0,0,1,gc,0,-1,0\n");
  EXPECT_EQ(first.message(),
            "trace.csv: line 2: column 'duration': -1 is negative");
  EXPECT_EQ(parser.Feed("0,0,0,1,gc,0,0,0\n").message(), first.message());
  const Result<trace::OpsTable> table = parser.Finish();
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().message(), first.message());
}

// A text size hint far off the truth only changes capacities, not results
// (past the address space: no reservation, the columns just grow; not
// under ASan, whose allocator ends the process on so large a request
// instead of failing it).
TEST(OpsCsvParserTest, WrongSizeHintsAreHarmless) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr size_t kPastTheAddressSpace = size_t{1} << 24;
#else
  constexpr size_t kPastTheAddressSpace = size_t{1} << 62;
#endif
  for (size_t hint :
       {size_t{1}, size_t{100}, size_t{1} << 24, kPastTheAddressSpace}) {
    EXPECT_TRUE(SameOutcome(
        ParsePieces({kTrickyCsv.substr(0, 150), kTrickyCsv.substr(150)}, hint),
        ParseOpsCsv(kTrickyCsv, "trace.csv")));
  }
}

}  // namespace
}  // namespace strag::ingest
