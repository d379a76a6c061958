// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

#include "ingest/common/file.h"
#include "ingest/ops_csv/ops_csv_schema.h"
#include "trace/op_type.h"

namespace strag::ingest {
namespace {

using trace::OpType;

// Header in a shuffled order, every known column, and two extra columns with
// quoted values that hold commas and doubled quotes.
constexpr std::string_view kFullCsv =
    "rank,dp_rank,stage,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc,"
    "tp_rank,cp_rank,tokens,name,seq_lens\n"
    "0,0,0,16,forward-compute,0.5,0.25,0,0,1,0,0,0,4096,\"fwd, mb 1\","
    "\"[1024, 3072]\"\n"
    "5,1,1,17,optimizer,2.6883304119110107,0.0001,3,-1,-1,-1,1,2,0,"
    "\"say \"\"hi\"\"\",[]\n";

constexpr std::string_view kHeader =
    "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n";

// Parses `csv` (named trace.csv) and expects kInvalidInput whose message
// contains every one of `parts`.
void ExpectInvalid(std::string_view csv,
                   std::initializer_list<std::string_view> parts) {
  const Result<trace::OpsTable> result = ParseOpsCsv(csv, "trace.csv");
  ASSERT_FALSE(result.ok()) << "parsed without error:\n" << csv;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
  for (std::string_view part : parts) {
    EXPECT_NE(result.status().message().find(part), std::string::npos)
        << "message: " << result.status().message() << "\nmissing: " << part;
  }
}

std::string WithRows(std::initializer_list<std::string_view> rows) {
  std::string csv(kHeader);
  for (std::string_view row : rows) csv.append(row).append("\n");
  return csv;
}

// Every column of a two-row CSV with all known columns, in shuffled order,
// lands in the right table column; extra columns are kept, unquoted.
TEST(OpsCsvReaderTest, ParsesEveryColumn) {
  const Result<trace::OpsTable> result = ParseOpsCsv(kFullCsv, "trace.csv");
  ASSERT_TRUE(result.ok()) << result.status().message();
  const trace::OpsTable& t = *result;
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.rank, (trace::Column<int32_t>{0, 5}));
  EXPECT_EQ(t.dp, (trace::Column<int32_t>{0, 1}));
  EXPECT_EQ(t.pp, (trace::Column<int32_t>{0, 1}));
  EXPECT_EQ(t.step, (trace::Column<int64_t>{16, 17}));
  EXPECT_EQ(t.op_type, (trace::Column<OpType>{OpType::kForwardCompute,
                                              OpType::kOptimizer}));
  EXPECT_EQ(t.seq_id, (trace::Column<int32_t>{0, 3}));
  EXPECT_EQ(t.chunk, (trace::Column<int32_t>{0, -1}));
  EXPECT_EQ(t.microbatch, (trace::Column<int32_t>{1, -1}));
  EXPECT_EQ(t.global_chunk, (trace::Column<int32_t>{0, -1}));
  EXPECT_EQ(t.tp, (trace::Column<int32_t>{0, 1}));
  EXPECT_EQ(t.cp, (trace::Column<int32_t>{0, 2}));
  EXPECT_EQ(t.tokens, (trace::Column<int64_t>{4096, 0}));
  EXPECT_EQ(t.start_ns, (trace::Column<int64_t>{500000000, 2688330412}));
  EXPECT_EQ(t.dur_ns, (trace::Column<int64_t>{250000000, 100000}));
  ASSERT_EQ(t.extra.size(), 2u);
  EXPECT_EQ(t.extra[0].name, "name");
  EXPECT_EQ(t.extra[0].Values(),
            (std::vector<std::string>{"fwd, mb 1", "say \"hi\""}));
  EXPECT_EQ(t.extra[1].name, "seq_lens");
  EXPECT_EQ(t.extra[1].Values(),
            (std::vector<std::string>{"[1024, 3072]", "[]"}));
}

// Times keep both forms: binary32 seconds exactly as (float)d, and
// llround(d * 1e9) nanoseconds.
TEST(OpsCsvReaderTest, KeepsS32AndNsTimes) {
  const Result<trace::OpsTable> result = ParseOpsCsv(kFullCsv, "trace.csv");
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_TRUE(result->has_s32_times());
  EXPECT_EQ(result->start_s32[1], static_cast<float>(2.6883304119110107));
  EXPECT_EQ(static_cast<double>(result->start_s32[1]), 2.6883304119110107);
  EXPECT_EQ(result->dur_s32[1], 0.0001f);
  EXPECT_EQ(result->start_s32[0], 0.5f);
  EXPECT_EQ(result->DurS32(1), result->dur_s32[1]);
}

// Absent optional columns: mc / mb_id / gmc become -1, tp / cp / tokens and
// extra stay empty; an empty mc field also means -1.
TEST(OpsCsvReaderTest, DefaultsForAbsentOptionalColumns) {
  const std::string csv =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id\n"
      "1,2,3,4,gc,0,0,0\n";
  const Result<trace::OpsTable> result = ParseOpsCsv(csv, "trace.csv");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->chunk, (trace::Column<int32_t>{-1}));
  EXPECT_EQ(result->microbatch, (trace::Column<int32_t>{-1}));
  EXPECT_EQ(result->global_chunk, (trace::Column<int32_t>{-1}));
  EXPECT_TRUE(result->tp.empty());
  EXPECT_TRUE(result->cp.empty());
  EXPECT_TRUE(result->tokens.empty());
  EXPECT_TRUE(result->extra.empty());

  const Result<trace::OpsTable> empty_mc =
      ParseOpsCsv(WithRows({"0,0,0,1,gc,0,0,0,,,"}), "trace.csv");
  ASSERT_TRUE(empty_mc.ok()) << empty_mc.status().message();
  EXPECT_EQ(empty_mc->chunk, (trace::Column<int32_t>{-1}));
  EXPECT_EQ(empty_mc->global_chunk, (trace::Column<int32_t>{-1}));
}

// CRLF line ends, blank lines and a missing final newline are accepted, and
// line numbers in errors still count physical lines.
TEST(OpsCsvReaderTest, AcceptsCrlfBlankLinesAndNoFinalNewline) {
  const std::string csv =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id\r\n"
      "0,0,0,1,forward-send,1.5,0.5,0\r\n"
      "\r\n"
      "0,0,0,1,forward-recv,2.5,0.25,0";
  const Result<trace::OpsTable> result = ParseOpsCsv(csv, "trace.csv");
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->size(), 2u);
  EXPECT_EQ(result->op_type[1], OpType::kForwardRecv);
  EXPECT_EQ(result->dur_ns[1], 250000000);
  EXPECT_EQ(result->seq_id[1], 0);

  ExpectInvalid(
      csv + "\r\n\r\n0,0,0,1,gc,x,0,0\r\n",
      {"trace.csv: line 6: column 'start_ts': \"x\" is not a number"});
}

// Quoted numbers and op types are read like plain ones.
TEST(OpsCsvReaderTest, AcceptsQuotedNumbers) {
  const Result<trace::OpsTable> result = ParseOpsCsv(
      WithRows({"\"1\",0,\"7\",2,\"gc\",\"0.5\",\"1e-3\",0,\"\",-1,-1"}),
      "trace.csv");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->dp[0], 1);
  EXPECT_EQ(result->rank[0], 7);
  EXPECT_EQ(result->op_type[0], OpType::kGc);
  EXPECT_EQ(result->start_ns[0], 500000000);
  EXPECT_EQ(result->dur_ns[0], 1000000);
  EXPECT_EQ(result->chunk[0], -1);
}

// Every Megatron op type name parses back to its type; the generic types
// of profiler traces (compute, all-reduce, ...) are not ops CSV types.
constexpr int kNumCsvOpTypes = trace::kNumMegatronOpTypes;

TEST(OpsCsvReaderTest, ParsesEveryOpType) {
  std::string csv(kHeader);
  for (int i = 0; i < kNumCsvOpTypes; ++i) {
    csv += "0,0,0,1," + std::string(trace::OpTypeName(static_cast<OpType>(i))) +
           ",0,0," + std::to_string(i) + ",-1,-1,-1\n";
  }
  const Result<trace::OpsTable> result = ParseOpsCsv(csv, "trace.csv");
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->size(), static_cast<size_t>(kNumCsvOpTypes));
  for (int i = 0; i < kNumCsvOpTypes; ++i) {
    EXPECT_EQ(result->op_type[static_cast<size_t>(i)], static_cast<OpType>(i));
  }
}

TEST(OpsCsvReaderTest, RejectsGenericOpTypes) {
  const std::string csv =
      std::string(kHeader) + "0,0,0,1,all-reduce,0,0,0,-1,-1,-1\n";
  const Result<trace::OpsTable> result = ParseOpsCsv(csv, "trace.csv");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("unknown op type \"all-reduce\""),
            std::string::npos)
      << result.status().message();
}

// A header without data rows is a valid, empty table.
TEST(OpsCsvReaderTest, HeaderOnlyGivesEmptyTable) {
  const Result<trace::OpsTable> result = ParseOpsCsv(kHeader, "trace.csv");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->size(), 0u);
  EXPECT_TRUE(result->chunk.empty());
}

// A line break inside a quoted field is data; the next record's errors name
// its own physical line.
TEST(OpsCsvReaderTest, QuotedLineBreakKeepsLineNumbers) {
  const std::string csv =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,name\n"
      "0,0,0,1,gc,0,0,0,\"two\nlines\"\n"
      "0,0,0,1,gc,0,-1,0,x\n";
  ExpectInvalid(csv, {"trace.csv: line 4: column 'duration': -1 is negative"});
}

// A missing required column is named, with the header that was found.
TEST(OpsCsvReaderTest, MissingRequiredColumn) {
  ExpectInvalid("dp_rank,stage,rank,step,optype,start_ts,duration,mc\n",
                {"trace.csv: missing required column 'seq_id'",
                 "header has: 'dp_rank', 'stage'"});
}

// A non-numeric time names file, line and column.
TEST(OpsCsvReaderTest, NonNumericField) {
  ExpectInvalid(
      WithRows({"0,0,0,1,gc,0,0,0,-1,-1,-1", "0,0,0,1,gc,0,abc,1,-1,-1,-1"}),
      {"trace.csv: line 3: column 'duration': \"abc\" is not a "
       "number"});
  ExpectInvalid(WithRows({"0,0,0,1,gc,1.5s,0,0,-1,-1,-1"}),
                {"trace.csv: line 2: column 'start_ts': \"1.5s\" is not a "
                 "number"});
  ExpectInvalid(WithRows({"0,0,1.5,1,gc,0,0,0,-1,-1,-1"}),
                {"trace.csv: line 2: column 'rank': \"1.5\" is not an "
                 "integer"});
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,0,0,x,-1,-1"}),
                {"trace.csv: line 2: column 'mc': \"x\" is not an integer"});
  ExpectInvalid(WithRows({"0,0,99999999999,1,gc,0,0,0,-1,-1,-1"}),
                {"trace.csv: line 2: column 'rank': \"99999999999\" is out of "
                 "range"});
}

// Negative durations, ranks and ids below -1 are rejected.
TEST(OpsCsvReaderTest, NegativeValues) {
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,-0.5,0,-1,-1,-1"}),
                {"trace.csv: line 2: column 'duration': -0.5 is negative"});
  ExpectInvalid(WithRows({"-1,0,0,1,gc,0,0,0,-1,-1,-1"}),
                {"trace.csv: line 2: column 'dp_rank': -1 is negative"});
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,0,0,-1,-2,-1"}),
                {"trace.csv: line 2: column 'mb_id': -2 is invalid"});
  // A negative start is fine: the origin of time is the input's choice.
  EXPECT_TRUE(
      ParseOpsCsv(WithRows({"0,0,0,-3,gc,-0.5,0,0,-1,-1,-1"}), "t.csv").ok());
}

// NaN, infinities and values beyond int64 nanoseconds are rejected.
TEST(OpsCsvReaderTest, NonFiniteAndHugeTimes) {
  ExpectInvalid(WithRows({"0,0,0,1,gc,nan,0,0,-1,-1,-1"}),
                {"line 2: column 'start_ts': \"nan\" is not a finite number"});
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,inf,0,-1,-1,-1"}),
                {"line 2: column 'duration': \"inf\" is not a finite number"});
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,1e999,0,-1,-1,-1"}),
                {"line 2: column 'duration': \"1e999\" is out of range"});
  ExpectInvalid(WithRows({"0,0,0,1,gc,1e10,0,0,-1,-1,-1"}),
                {"line 2: column 'start_ts': 1e10 is out of range"});
}

// An unknown op type lists the accepted names.
TEST(OpsCsvReaderTest, UnknownOpType) {
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,0,0,-1,-1,-1",
                          "0,0,0,1,forward-computer,0,0,0,-1,-1,-1"}),
                {"trace.csv: line 3: column 'optype': unknown op type "
                 "\"forward-computer\" (expected one of forward-compute, "
                 "backward-compute,",
                 "gc)"});
  ExpectInvalid(WithRows({"0,0,0,1,,0,0,0,-1,-1,-1"}),
                {"line 2: column 'optype': unknown op type \"\""});
}

// Rows with too few or too many fields name the line and both counts.
TEST(OpsCsvReaderTest, WrongFieldCount) {
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,0,0,-1,-1,-1", "0,0,0,1,gc,0,0,0,-1"}),
                {"trace.csv: line 3: expected 11 fields as in the header, "
                 "found 9"});
  ExpectInvalid(WithRows({"0,0,0,1,gc,0,0,0,-1,-1,-1,7"}),
                {"trace.csv: line 2: expected 11 fields as in the header, "
                 "found 12"});
}

// Empty input, a duplicate column and a broken quote are reported.
TEST(OpsCsvReaderTest, MalformedFileStructure) {
  ExpectInvalid("", {"trace.csv: empty file"});
  ExpectInvalid("\n\r\n", {"trace.csv: empty file"});
  ExpectInvalid(
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,"
      "rank\n",
      {"trace.csv: line 1: duplicate column 'rank'"});
  ExpectInvalid(
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,name\n"
      "0,0,0,1,gc,0,0,0,\"open\n",
      {"trace.csv: line 2: column 'name': quoted field has no closing quote"});
  ExpectInvalid(
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,name\n"
      "0,0,0,1,gc,0,0,0,\"a\"b\n",
      {"trace.csv: line 2: column 'name': unexpected text after the closing "
       "quote"});
}

// SecondsToNs is exactly llround(s * 1e9), ties and negatives included.
TEST(OpsCsvReaderTest, SecondsToNsMatchesLlround) {
  for (double s :
       {0.0, -0.0, 0.5e-9, -0.5e-9, 1.5e-9, -2.5e-9, 2.6883304119110107, -1e-10,
        9.2e9, -9.2e9, 1234.5678901234}) {
    EXPECT_EQ(ops_csv::SecondsToNs(s), std::llround(s * 1e9)) << s;
  }
  uint64_t state = 7;  // fixed seed: deterministic
  for (int i = 0; i < 100000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double s = static_cast<double>(static_cast<int64_t>(state >> 11)) *
                     std::ldexp(1.0, -(static_cast<int>(state % 90) + 10));
    const double signed_s = (state & 1) != 0 ? -s : s;
    if (std::fabs(signed_s) > ops_csv::kMaxAbsSeconds) continue;
    ASSERT_EQ(ops_csv::SecondsToNs(signed_s), std::llround(signed_s * 1e9))
        << signed_s;
  }
}

std::string DataPath(std::string_view relative) {
  return std::string(STRAG_SHARED_DATA_DIR) + std::string(relative);
}

// Reads a published trace, or skips the test when the data is absent.
#define READ_GOLDEN_OR_SKIP(var, relative)                                   \
  const std::string var##_path = DataPath(relative);                         \
  if (!std::filesystem::exists(var##_path)) {                                \
    GTEST_SKIP() << "reference data not found at " << var##_path;            \
  }                                                                          \
  const Result<std::string> var##_bytes = ReadFileMaybeGz(var##_path);       \
  ASSERT_TRUE(var##_bytes.ok()) << var##_bytes.status().message();           \
  const Result<trace::OpsTable> var = ParseOpsCsv(*var##_bytes, var##_path); \
  ASSERT_TRUE(var.ok()) << var.status().message()

// The published ST trace: 6784 rows, DP 2 x PP 4.
TEST(OpsCsvReaderGoldenTest, PublishedTraceSt) {
  READ_GOLDEN_OR_SKIP(table, "/osdi25-whatif/trace-ST.csv.gz");
  EXPECT_EQ(table->size(), 6784u);
  EXPECT_EQ(*std::max_element(table->dp.begin(), table->dp.end()), 1);
  EXPECT_EQ(*std::max_element(table->pp.begin(), table->pp.end()), 3);
  // First row: 0,0,0,23,backward-compute,0.8486716747283936,
  // 0.13867968320846558,0,0,0,0
  EXPECT_EQ(table->step[0], 23);
  EXPECT_EQ(table->op_type[0], OpType::kBackwardCompute);
  EXPECT_EQ(static_cast<double>(table->start_s32[0]), 0.8486716747283936);
  EXPECT_EQ(static_cast<double>(table->dur_s32[0]), 0.13867968320846558);
}

// The published AR trace: 117216 rows, DP 4 x PP 4, every time exactly a
// binary32 value.
TEST(OpsCsvReaderGoldenTest, PublishedTraceAr) {
  READ_GOLDEN_OR_SKIP(table, "/osdi25-whatif/trace-AR.csv.gz");
  EXPECT_EQ(table->size(), 117216u);
  EXPECT_EQ(*std::max_element(table->dp.begin(), table->dp.end()), 3);
  EXPECT_EQ(*std::max_element(table->pp.begin(), table->pp.end()), 3);
  EXPECT_EQ(table->extra.size(), 0u);
  // First row: 0,0,0,16,backward-compute,2.6883304119110107,
  // 0.8543476462364197,0,0,0,0
  EXPECT_EQ(static_cast<double>(table->start_s32[0]), 2.6883304119110107);
  EXPECT_EQ(table->start_ns[0], 2688330412);
  EXPECT_EQ(static_cast<double>(table->dur_s32[0]), 0.8543476462364197);
  EXPECT_EQ(table->dur_ns[0], 854347646);
}

}  // namespace
}  // namespace strag::ingest
