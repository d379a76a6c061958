// SPDX-License-Identifier: Apache-2.0
// The ops CSV reader's limits (issue 11): a line over max_line_bytes, a NUL
// byte in the header and a header of too many fields are refused, the same
// however the text is cut, and a file reader stops at once (a gzip bomb is
// not inflated to its end).

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/common/gzip.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "ingest/ops_csv/ops_csv_parser.h"
#include "ingest/ops_csv/ops_csv_reader.h"
#include "ingest/ops_csv/ops_csv_test_util.h"

namespace strag::ingest {
namespace {

constexpr std::string_view kHeader =
    "rank,dp_rank,stage,step,optype,start_ts,duration,seq_id\n";

std::string Row(int rank) {
  return std::to_string(rank) + ",0,0,1,forward-compute,0.5,0.25," +
         std::to_string(rank) + "\n";
}

// The outcome of `csv` cut at every position (and in one piece) under the
// line limit `limit`: all the same; returned.
Result<trace::OpsTable> EveryCut(std::string_view csv, uint64_t limit) {
  const Result<trace::OpsTable> whole = ParseOpsCsv(csv, "t.csv", limit);
  for (size_t i = 0; i <= csv.size(); ++i) {
    OpsCsvParser parser("t.csv", 0, limit);
    Status status = parser.Feed(csv.substr(0, i));
    if (status.ok()) status = parser.Feed(csv.substr(i));
    const Result<trace::OpsTable> cut =
        status.ok() ? parser.Finish() : Result<trace::OpsTable>(status);
    EXPECT_TRUE(SameOutcome(cut, whole)) << "cut at " << i;
  }
  return whole;
}

std::string ErrorOf(const Result<trace::OpsTable>& r) {
  return r.ok() ? "ok" : r.status().message();
}

std::string LineError(size_t byte, int line, const std::string& limit,
                      bool record = false) {
  return "t.csv: byte " + std::to_string(byte) + " (line " +
         std::to_string(line) + "): " +
         (record ? "a record (a quoted field with line breaks)" : "a line") +
         " longer than " + limit + " (--max-line-bytes to raise)";
}

// A line of exactly the limit (its "\n" included) is read; one byte more is
// refused with the byte where the line starts, before any of it is parsed.
TEST(OpsCsvLimitsTest, LineLimitIsExact) {
  const std::string row = Row(7) + Row(8);
  const std::string csv = std::string(kHeader) + row;
  EXPECT_TRUE(EveryCut(csv, kHeader.size()).ok());
  EXPECT_EQ(ErrorOf(EveryCut(csv, kHeader.size() - 1)),
            LineError(0, 1, std::to_string(kHeader.size() - 1) + " bytes"));
  // A long data line is refused, though it is also bad in other ways.
  const std::string bad =
      std::string(kHeader) + "x" + std::string(200, ',') + "\n";
  EXPECT_EQ(ErrorOf(EveryCut(bad, 100)),
            LineError(kHeader.size(), 2, "100 bytes"));
  // The last line, without a line break.
  EXPECT_EQ(ErrorOf(EveryCut(std::string(kHeader) + std::string(80, '1'), 64)),
            LineError(kHeader.size(), 2, "64 bytes"));
}

// A quoted field with line breaks counts whole, also when it never ends.
TEST(OpsCsvLimitsTest, QuotedRecordsCountWhole) {
  const std::string header =
      std::string(kHeader.substr(0, kHeader.size() - 1)) + ",name\n";
  std::string record = "1,0,0,1,gc,0,1,0,\"";
  for (int i = 0; i < 40; ++i) record += "a\n";
  record += "\"\n";  // 100 bytes, more than the header's 61
  const std::string quoted = header + record;
  EXPECT_TRUE(EveryCut(quoted, 100).ok());
  EXPECT_EQ(ErrorOf(EveryCut(quoted, 99)),
            LineError(header.size(), 2, "99 bytes", true));
  const std::string open =
      header + "1,0,0,1,gc,0,1,0,\"" + std::string(300, '\n');
  EXPECT_EQ(ErrorOf(EveryCut(open, 100)),
            LineError(header.size(), 2, "100 bytes", true));
}

// Records with line breaks in a row, each under the limit but two of them
// over it: a cut inside the first leaves it open; the text after the cut
// ends it and opens the next, which is then carried on its own, not
// refused as one record with the first (a fuzz find).
TEST(OpsCsvLimitsTest, QuotedRecordsInARowCountOneByOne) {
  const std::string header =
      std::string(kHeader.substr(0, kHeader.size() - 1)) + ",name\n";
  std::string csv = header;
  for (int r = 0; r < 4; ++r) {
    csv += std::to_string(r) + ",0,0,1,gc,0,1,0,\"";
    for (int i = 0; i < 25; ++i) csv += "a\n";
    csv += "\"\n";  // 70 bytes
  }
  const Result<trace::OpsTable> table = EveryCut(csv, 100);
  ASSERT_TRUE(table.ok()) << ErrorOf(table);
  EXPECT_EQ(table->rank.size(), 4u);
  EXPECT_EQ(ErrorOf(EveryCut(csv, 69)),
            LineError(header.size(), 2, "69 bytes", true));
}

// A NUL byte in the header line is binary data, refused at its byte; past
// the line limit the line's refusal comes first.
TEST(OpsCsvLimitsTest, NulInTheHeaderIsRefused) {
  const std::string nul = "\n\r\nrank,dp" + std::string(1, '\0') + "x\n";
  EXPECT_EQ(ErrorOf(EveryCut(nul, 64)),
            "t.csv: byte 10: a NUL byte in the header line: binary data (or "
            "UTF-16), not a CSV text");
  EXPECT_EQ(ErrorOf(EveryCut(nul, 6)), LineError(3, 3, "6 bytes"));
  // After the header a NUL is only a byte of a field.
  const std::string row =
      "0,0,0,1,forward-compute,0.5,0.25,0" + std::string(1, '\0') + "\n";
  EXPECT_EQ(ErrorOf(EveryCut(std::string(kHeader) + row, 64)),
            "t.csv: line 2: column 'seq_id': \"0" + std::string(1, '\0') +
                "\" is not an integer");
}

TEST(OpsCsvLimitsTest, HeaderOfTooManyFields) {
  std::string header;
  for (int i = 0; i < 300; ++i) header += "c" + std::to_string(i) + ",";
  EXPECT_EQ(ErrorOf(ParseOpsCsv(header + "\n", "t.csv")),
            "t.csv: line 1: field 257: more than 256 fields");
}

TEST(OpsCsvLimitsTest, RefusalsAreMarked) {
  OpsCsvParser parser("t.csv", 0, 64);
  EXPECT_FALSE(parser.Feed(std::string(kHeader) + "x,y\n").ok());
  EXPECT_FALSE(parser.refused());  // bad input, not a refusal
  OpsCsvParser refusing("t.csv", 0, 64);
  EXPECT_FALSE(refusing.Feed(std::string(100, 'x')).ok());
  EXPECT_TRUE(refusing.refused());
}

std::string WriteTemp(const std::string& name, std::string_view bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A gzip bomb (here 4 x 16 MiB of NULs, then damage) is refused at byte 0
// without being inflated: the damage after it is never seen, threaded or
// not. A line without end in a plain file is refused at the limit.
TEST(OpsCsvLimitsTest, FileReaderStopsAtARefusal) {
  const Result<std::string> member = GzipCompress(std::string(16 << 20, '\0'));
  ASSERT_TRUE(member.ok());
  std::string bomb;
  for (int i = 0; i < 4; ++i) bomb += *member;
  bomb += "\x1f\x8b damaged";
  const std::string path = WriteTemp("strag_csv_bomb.csv.gz", bomb);
  for (bool threaded : {false, true}) {
    const Result<trace::OpsTable> r =
        ReadOpsCsvFile(path, {.inflate_on_thread = threaded});
    EXPECT_EQ(ErrorOf(r), path +
                              ": byte 0: a NUL byte in the header line: "
                              "binary data (or UTF-16), not a CSV text");
  }
  const std::string line =
      WriteTemp("strag_csv_line.csv",
                std::string(kHeader) + std::string(size_t{3} << 20, 'x'));
  for (bool threaded : {false, true}) {
    const Result<trace::OpsTable> r =
        ReadOpsCsvFile(line, {.block_bytes = 4096,
                              .inflate_on_thread = threaded,
                              .limits = {.max_line_bytes = size_t{1} << 20}});
    EXPECT_EQ(ErrorOf(r), line +
                              ": byte 56 (line 2): a line longer than 1 MiB "
                              "(--max-line-bytes to raise)");
  }
}

}  // namespace
}  // namespace strag::ingest
