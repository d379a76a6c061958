// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_writer.h"

#include <gtest/gtest.h>

#include <bit>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "ingest/common/decimal_time.h"
#include "ingest/common/file.h"
#include "ingest/ops_csv/ops_csv_reader.h"

namespace strag::ingest {
namespace {

using trace::OpType;

void ExpectTablesEqual(const trace::OpsTable& a, const trace::OpsTable& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.dp, b.dp);
  EXPECT_EQ(a.pp, b.pp);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.op_type, b.op_type);
  EXPECT_EQ(a.seq_id, b.seq_id);
  EXPECT_EQ(a.chunk, b.chunk);
  EXPECT_EQ(a.microbatch, b.microbatch);
  EXPECT_EQ(a.global_chunk, b.global_chunk);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.dur_ns, b.dur_ns);
  EXPECT_EQ(a.start_s32, b.start_s32);
  EXPECT_EQ(a.dur_s32, b.dur_s32);
  EXPECT_EQ(a.start_rem_as, b.start_rem_as);
  EXPECT_EQ(a.tp, b.tp);
  EXPECT_EQ(a.cp, b.cp);
  EXPECT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.extra.size(), b.extra.size());
  for (size_t i = 0; i < a.extra.size(); ++i) {
    EXPECT_EQ(a.extra[i].name, b.extra[i].name);
    EXPECT_EQ(a.extra[i].Values(), b.extra[i].Values());
  }
}

// Parse(Write(Parse(csv))) == Parse(csv).
void ExpectRoundTrip(std::string_view csv) {
  const Result<trace::OpsTable> first = ParseOpsCsv(csv, "in.csv");
  ASSERT_TRUE(first.ok()) << first.status().message();
  const std::string written = WriteOpsCsv(*first);
  const Result<trace::OpsTable> second = ParseOpsCsv(written, "out.csv");
  ASSERT_TRUE(second.ok()) << second.status().message() << "\n" << written;
  ExpectTablesEqual(*first, *second);
}

// A hand-built table without s32 times: fixed header, optional columns after
// it, times as ns / 1e9 in shortest form, extra values quoted when needed.
TEST(OpsCsvWriterTest, WritesHeaderRowsAndQuotes) {
  trace::OpsTable t;
  t.rank = {3};
  t.dp = {1};
  t.pp = {2};
  t.step = {40};
  t.op_type = {OpType::kBackwardRecv};
  t.seq_id = {5};
  t.chunk = {0};
  t.microbatch = {-1};
  t.global_chunk = {6};
  t.start_ns = {1500000000};
  t.dur_ns = {250000};
  t.tokens = {8192};
  t.extra = {{"name", {"a, \"b\""}}, {"plain", {"x"}}};
  EXPECT_EQ(WriteOpsCsv(t),
            "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,"
            "gmc,tokens,name,plain\n"
            "1,2,3,40,backward-recv,1.5,0.00025,5,0,-1,6,8192,"
            "\"a, \"\"b\"\"\",x\n");
}

// A table read from CSV comes back identical, extra and quoted columns too.
TEST(OpsCsvWriterTest, RoundTripsEveryColumn) {
  ExpectRoundTrip(
      "rank,dp_rank,stage,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc,"
      "tp_rank,cp_rank,tokens,name,seq_lens\n"
      "0,0,0,16,forward-compute,0.5,0.25,0,0,1,0,0,0,4096,\"fwd, mb 1\","
      "\"[1024, 3072]\"\n"
      "5,1,1,17,optimizer,2.6883304119110107,0.0001,3,-1,-1,-1,1,2,0,"
      "\"say \"\"hi\"\"\nbye\",[]\n");
}

// Short decimals stay short; the published traces' 17-digit binary32 values
// are written in a shorter form that still gives the same s32 and ns.
TEST(OpsCsvWriterTest, ChoosesShortTimeText) {
  const std::string csv =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id\n"
      "0,0,0,1,gc,0.1,2.6883304119110107,0\n";
  const Result<trace::OpsTable> table = ParseOpsCsv(csv, "in.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(WriteOpsCsv(*table),
            "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,"
            "gmc\n0,0,0,1,gc,0.1,2.688330412,0,-1,-1,-1\n");
  ExpectRoundTrip(csv);
}

// Many times of every magnitude, written as the published traces do (the
// binary32 value printed as a double) or as short decimals, round trip.
TEST(OpsCsvWriterTest, RoundTripsTimesOfEveryMagnitude) {
  std::string csv = "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id\n";
  uint64_t state = 12345;  // fixed seed: deterministic
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto bits = static_cast<uint32_t>(state >> 33);
    // Positive floats from ~1e-10 to ~1e9 seconds.
    const float f = std::bit_cast<float>((bits % (0x4E800000u - 0x2F000000u)) +
                                         0x2F000000u);
    std::array<char, 64> buffer{};
    const auto as_double = std::to_chars(
        buffer.data(), buffer.data() + buffer.size(), static_cast<double>(f));
    const std::string exact(buffer.data(), as_double.ptr);
    const std::string decimal =
        std::to_string(bits % 100000) + "." + std::to_string(bits % 1000003);
    csv += "0,0,0,1,gc," + exact + "," + decimal + ",0\n";
  }
  ExpectRoundTrip(csv);
}

// A table without s32 columns keeps its ns values through the round trip
// (the reader adds s32 columns).
TEST(OpsCsvWriterTest, RoundTripsNsOnlyTable) {
  trace::OpsTable t;
  for (int64_t i = 0; i < 1000; ++i) {
    t.rank.push_back(0);
    t.dp.push_back(0);
    t.pp.push_back(0);
    t.step.push_back(i);
    t.op_type.push_back(OpType::kForwardCompute);
    t.seq_id.push_back(0);
    t.chunk.push_back(-1);
    t.microbatch.push_back(-1);
    t.global_chunk.push_back(-1);
    t.start_ns.push_back(i * 987654321987 + 1);
    t.dur_ns.push_back(i * 1234567 + 7);
  }
  const Result<trace::OpsTable> back = ParseOpsCsv(WriteOpsCsv(t), "out.csv");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->start_ns, t.start_ns);
  EXPECT_EQ(back->dur_ns, t.dur_ns);
  EXPECT_TRUE(back->has_s32_times());
}

// A table without s32 columns writes each time as ExactTimeToSecondsText of
// its ns (the writer's own formatter must give the same text).
TEST(OpsCsvWriterTest, NsOnlyTimesAreExactSecondsText) {
  const int64_t values[] = {0, 1, -1, 7, 10, 999'999'999, 1'000'000'000,
                            -1'000'000'000, 1'000'000'001, -500'000'000,
                            123'456'789'000, 4'000'000'000'000'000'120,
                            std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min()};
  trace::OpsTable t;
  for (int64_t ns : values) {
    t.rank.push_back(0);
    t.dp.push_back(0);
    t.pp.push_back(0);
    t.step.push_back(0);
    t.op_type.push_back(OpType::kForwardCompute);
    t.seq_id.push_back(0);
    t.chunk.push_back(0);
    t.microbatch.push_back(0);
    t.global_chunk.push_back(0);
    t.start_ns.push_back(ns);
    t.dur_ns.push_back(ns / 3);
  }
  std::string expected;
  AppendOpsCsvHeader(t, &expected);
  for (size_t i = 0; i < t.size(); ++i) {
    expected += "0,0,0,0,forward-compute," +
                ExactTimeToSecondsText({t.start_ns[i], 0}) + "," +
                ExactTimeToSecondsText({t.dur_ns[i], 0}) + ",0,0,0,0\n";
  }
  EXPECT_EQ(WriteOpsCsv(t), expected);
}

// The header and rows written in batches are WriteOpsCsv's bytes.
TEST(OpsCsvWriterTest, BatchesConcatenateToTheWholeText) {
  trace::OpsTable t;
  for (int64_t i = 0; i < 50; ++i) {
    t.rank.push_back(static_cast<int32_t>(i % 4));
    t.dp.push_back(0);
    t.pp.push_back(1);
    t.step.push_back(i / 10);
    t.op_type.push_back(OpType::kBackwardCompute);
    t.seq_id.push_back(static_cast<int32_t>(i));
    t.chunk.push_back(0);
    t.microbatch.push_back(static_cast<int32_t>(i % 3));
    t.global_chunk.push_back(1);
    t.start_ns.push_back(i * 1'234'567);
    t.dur_ns.push_back(1000 + i);
    t.tp.push_back(0);
    t.tokens.push_back(i * 7);
  }
  t.extra.push_back({"seq_lens", std::vector<std::string>(50, "1;2,3")});
  std::string batched;
  AppendOpsCsvHeader(t, &batched);
  for (size_t begin = 0; begin < t.size(); begin += 7) {
    AppendOpsCsvRows(t, begin, std::min(t.size(), begin + 7), &batched);
  }
  EXPECT_EQ(batched, WriteOpsCsv(t));
}

// The published AR trace round trips through the writer.
TEST(OpsCsvWriterGoldenTest, PublishedTraceArRoundTrips) {
  const std::string path =
      std::string(STRAG_SHARED_DATA_DIR) + "/osdi25-whatif/trace-AR.csv.gz";
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "reference data not found at " << path;
  }
  const Result<std::string> csv = ReadFileMaybeGz(path);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  ExpectRoundTrip(*csv);
}

}  // namespace
}  // namespace strag::ingest
