// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/common/file.h"
#include "ingest/common/gunzip_stream.h"
#include "ingest/common/gzip.h"
#include "ingest/common/parallel_gzip_writer.h"
#include "ingest/ops_csv/ops_csv_parser.h"
#include "ingest/ops_csv/ops_csv_reader.h"
#include "ingest/ops_csv/ops_csv_test_util.h"

namespace strag::ingest {
namespace {


std::string WriteTemp(const std::string& name, std::string_view bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string Gzip(std::string_view text) {
  Result<std::string> gz = GzipCompress(text);
  EXPECT_TRUE(gz.ok()) << gz.status().message();
  return gz.ok() ? *gz : std::string();
}

// What the whole-file path gives: ReadFileMaybeGz, then ParseOpsCsv.
Result<trace::OpsTable> ReadWhole(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadFileMaybeGz(path));
  return ParseOpsCsv(text, path);
}

constexpr GzipEngine kEngines[] = {GzipEngine::kZlib, GzipEngine::kIsal};

const char* EngineName(GzipEngine engine) {
  return engine == GzipEngine::kIsal ? "ISA-L" : "zlib";
}

// ReadOpsCsvFile(path) with `engine` matches ReadWhole(path) for every block
// size in `block_sizes`, threaded and not.
void ExpectSameAsWhole(const std::string& path,
                       const std::vector<size_t>& block_sizes,
                       GzipEngine engine) {
  const Result<trace::OpsTable> expected = ReadWhole(path);
  for (size_t block_bytes : block_sizes) {
    for (bool threaded : {false, true}) {
      const ReadOpsCsvOptions options{.block_bytes = block_bytes,
                                      .inflate_on_thread = threaded,
                                      .gzip_engine = engine};
      ASSERT_TRUE(SameOutcome(ReadOpsCsvFile(path, options), expected))
          << path << " with blocks of " << block_bytes << " bytes"
          << (threaded ? ", threaded" : "") << ", " << EngineName(engine);
    }
  }
}

// The same with both engines: whatever is not a corrupt gzip stream (a
// table, a CSV error, a truncated stream) reads the same with either.
void ExpectSameAsWhole(const std::string& path,
                       const std::vector<size_t>& block_sizes) {
  for (GzipEngine engine : kEngines) {
    ExpectSameAsWhole(path, block_sizes, engine);
  }
}

// The contract of a damaged gzip file, for every engine: one kInvalidInput
// error that names the file and a compressed byte offset inside it
// ("PATH: gzip stream is truncated at compressed byte N" or "PATH: gzip
// stream is corrupt at byte N: REASON").
::testing::AssertionResult IsGzipError(const Result<trace::OpsTable>& result,
                                       const std::string& path,
                                       size_t file_bytes) {
  if (result.ok()) return ::testing::AssertionFailure() << "parsed";
  const std::string& message = result.status().message();
  if (result.status().code() != StatusCode::kInvalidInput) {
    return ::testing::AssertionFailure() << "not invalid input: " << message;
  }
  const std::string truncated =
      path + ": gzip stream is truncated at compressed byte ";
  const std::string corrupt = path + ": gzip stream is corrupt at byte ";
  const bool is_truncated = message.starts_with(truncated);
  if (!is_truncated && !message.starts_with(corrupt)) {
    return ::testing::AssertionFailure() << "not a gzip error: " << message;
  }
  const std::string rest =
      message.substr(is_truncated ? truncated.size() : corrupt.size());
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
    ++digits;
  }
  if (digits == 0 || std::stoull(rest.substr(0, digits)) > file_bytes) {
    return ::testing::AssertionFailure()
           << "no byte offset inside the file: " << message;
  }
  const std::string reason = rest.substr(digits);
  if (is_truncated ? !reason.empty()
                   : (!reason.starts_with(": ") || reason.size() <= 2)) {
    return ::testing::AssertionFailure() << "malformed: " << message;
  }
  return ::testing::AssertionSuccess();
}

std::vector<size_t> EveryBlockSize(size_t up_to) {
  std::vector<size_t> sizes;
  for (size_t size = 1; size <= up_to; ++size) sizes.push_back(size);
  return sizes;
}

constexpr std::string_view kHeader =
    "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id\n";

// `rows` rows of about 40 bytes, after the header unless `header` is false.
std::string ManyRows(int rows, bool header = true) {
  std::string csv(header ? kHeader : "");
  for (int i = 0; i < rows; ++i) {
    csv += std::to_string(i % 4) + ",0," + std::to_string(i % 16) +
           ",1,forward-compute," + std::to_string(i) + ".125,0.5," +
           std::to_string(i) + "\n";
  }
  return csv;
}

// Blocks of every size from 1 byte to the whole file put a block boundary at
// every position: inside a field, inside a quoted field, between `\r` and
// `\n`, on a line boundary; plain and gzip, threaded or not.
TEST(ReadOpsCsvFileTest, EveryBlockSizeGivesTheSameTable) {
  const std::string plain = WriteTemp("strag_tricky.csv", kTrickyCsv);
  const std::string gz = WriteTemp("strag_tricky.csv.gz", Gzip(kTrickyCsv));
  const Result<trace::OpsTable> table = ReadOpsCsvFile(plain);
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->size(), 5u);
  ExpectSameAsWhole(plain, EveryBlockSize(kTrickyCsv.size() + 1));
  ExpectSameAsWhole(gz, EveryBlockSize(kTrickyCsv.size() + 1));
}

// Without nanosecond durations: the same table but an empty dur_ns (the
// binary32 durations, and the errors, as always), on the general path's
// rows (quotes, CRLF), on rows parsed in parts on several threads, and for
// a negative or malformed duration.
TEST(ReadOpsCsvFileTest, WithoutNsDurationsOnlyDurNsIsEmpty) {
  const std::string negative =
      ManyRows(3) + "0,0,1,1,forward-compute,9.5,-0.5,3\n";
  const std::string malformed =
      ManyRows(3) + "0,0,1,1,forward-compute,9.5,0.5x,3\n";
  const std::string many = ManyRows(200000);
  ASSERT_GT(many.size(), 4 * OpsCsvParser::kMinPartBytes);
  int n = 0;
  for (const std::string_view csv :
       {std::string_view(kTrickyCsv), std::string_view(many),
        std::string_view(negative), std::string_view(malformed)}) {
    const std::string path =
        WriteTemp("strag_no_ns_" + std::to_string(n++) + ".csv", csv);
    for (size_t threads : {1, 3}) {
      Result<trace::OpsTable> expected =
          ReadOpsCsvFile(path, {.threads = threads});
      if (expected.ok()) {
        ASSERT_EQ(expected->dur_ns.size(), expected->size());
        expected->dur_ns.clear();
      }
      const Result<trace::OpsTable> got =
          ReadOpsCsvFile(path, {.threads = threads, .ns_durations = false});
      ASSERT_TRUE(SameOutcome(got, expected)) << path << ", " << threads;
      if (got.ok()) {
        EXPECT_TRUE(got->dur_ns.empty());
        EXPECT_EQ(got->dur_s32.size(), got->size());
      }
    }
  }
}

// What `strag analyze` reads for itself: the keys by runs of rows and the
// microbatches only beside extra columns. The same table otherwise (the
// runs as columns again), and the same errors, for tables cut into many
// windows (tiny blocks) and parts (threads), through both paths (the tricky
// rows take the general one), with and without mb_id and extra columns.
TEST(ReadOpsCsvFileTest, KeysInRunsAndMicrobatchesWithExtraOnly) {
  std::string with_mb =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mb_id\n";
  for (int i = 0; i < 30000; ++i) {
    // Runs of 7 rows of one worker and step, steps one after another.
    const int run = i / 7;
    with_mb += std::to_string(run % 3) + "," + std::to_string(run / 3 % 2) +
               "," + std::to_string(run % 6) + "," + std::to_string(run / 6) +
               ",forward-compute,0.5,0.25," + std::to_string(i % 7) + "," +
               std::to_string(i % 5) + "\n";
  }
  const std::string bad_mb = with_mb + "0,0,0,1,gc,0,0,0,-2\n";
  const std::string many = ManyRows(200000);
  // Extra columns without mb_id: the microbatches (all -1) are kept.
  std::string extra_no_mb =
      "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,seq_lens\n";
  for (int i = 0; i < 3000; ++i) {
    extra_no_mb += "0,0,0," + std::to_string(i / 10) +
                   ",forward-compute,0.5,0.25," + std::to_string(i % 10) +
                   ",[4096]\n";
  }
  int n = 0;
  for (const std::string_view csv :
       {std::string_view(kTrickyCsv), std::string_view(with_mb),
        std::string_view(bad_mb), std::string_view(many),
        std::string_view(extra_no_mb)}) {
    const std::string path =
        WriteTemp("strag_key_runs_" + std::to_string(n++) + ".csv", csv);
    for (const size_t threads : {1, 3}) {
      for (const size_t block_bytes : {size_t{0}, size_t{4099}}) {
        const ReadOpsCsvOptions base{.block_bytes = block_bytes,
                                     .threads = threads};
        Result<trace::OpsTable> expected = ReadOpsCsvFile(path, base);
        ReadOpsCsvOptions own = base;
        own.key_runs = true, own.microbatches = false;
        Result<trace::OpsTable> got = ReadOpsCsvFile(path, own);
        // Each option alone too.
        own.microbatches = true;
        Result<trace::OpsTable> runs_only = ReadOpsCsvFile(path, own);
        if (runs_only.ok()) runs_only->KeysToColumns();
        ASSERT_TRUE(SameOutcome(runs_only, expected)) << path << ", runs";
        own.key_runs = false, own.microbatches = false;
        Result<trace::OpsTable> mb_only = ReadOpsCsvFile(path, own);
        if (mb_only.ok() && expected.ok() && mb_only->extra.empty()) {
          EXPECT_TRUE(mb_only->microbatch.empty());
          mb_only->microbatch = expected->microbatch;
        }
        ASSERT_TRUE(SameOutcome(mb_only, expected)) << path << ", mb";
        if (got.ok()) {
          // A run per row (`many`: the rank changes every row) past the
          // trial rows: the keys went back to columns.
          EXPECT_EQ(got->keys_in_runs, csv.data() != many.data()) << path;
          ASSERT_EQ(got->rank.size(), got->keys_in_runs ? 0 : got->size());
          if (csv.data() == with_mb.data()) {  // runs of 7 rows
            EXPECT_EQ(got->key_runs.size(), (got->size() + 6) / 7);
          }
          got->KeysToColumns();
          EXPECT_EQ(got->microbatch.size(),
                    got->extra.empty() ? 0 : got->size())
              << path;
          if (expected.ok() && got->extra.empty()) expected->microbatch.clear();
        }
        ASSERT_TRUE(SameOutcome(got, expected))
            << path << ", " << threads << " threads, blocks " << block_bytes;
      }
    }
  }
}

// A bad field on a line that spans a block boundary is reported with the
// line, column and wording of ParseOpsCsv.
TEST(ReadOpsCsvFileTest, ErrorOnALineAcrossBlocks) {
  const std::string csv =
      ManyRows(5) + "0,0,0,1,gc,0,abc,1\n" + ManyRows(3, /*header=*/false);
  const std::string plain = WriteTemp("strag_bad.csv", csv);
  const std::string gz = WriteTemp("strag_bad.csv.gz", Gzip(csv));
  const Result<trace::OpsTable> table = ReadOpsCsvFile(gz);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().message(),
            gz + ": line 7: column 'duration': \"abc\" is not a number");
  ExpectSameAsWhole(plain, EveryBlockSize(csv.size() + 1));
  ExpectSameAsWhole(gz, EveryBlockSize(csv.size() + 1));
}

// A cut gzip file gives one error that names the file and the byte where
// the stream ends (the same with either engine), not a CSV error about its
// partial last line.
TEST(ReadOpsCsvFileTest, TruncatedGzip) {
  const std::string gz = Gzip(ManyRows(3000));
  for (size_t cut : {size_t{5}, size_t{12}, gz.size() / 2, gz.size() - 1}) {
    const std::string path = WriteTemp("strag_cut.csv.gz", gz.substr(0, cut));
    for (GzipEngine engine : kEngines) {
      const Result<trace::OpsTable> table =
          ReadOpsCsvFile(path, {.gzip_engine = engine});
      EXPECT_TRUE(IsGzipError(table, path, cut)) << EngineName(engine);
      EXPECT_EQ(table.status().message(),
                path + ": gzip stream is truncated at compressed byte " +
                    std::to_string(cut))
          << EngineName(engine);
    }
    ExpectSameAsWhole(path, {7, 64, 1000, 1 << 16});
  }
}

// Damage anywhere (header, deflate data, CRC trailer, junk after the end)
// is one gzip error naming the file and a byte, with either engine, even
// where the damaged data inflates to text that fails to parse before the
// inflater notices. With zlib it is the whole-file outcome at every block
// size; ISA-L may notice damaged deflate data elsewhere (gunzip_stream.h).
TEST(ReadOpsCsvFileTest, CorruptGzip) {
  const std::string gz = Gzip(ManyRows(1000));
  std::vector<std::string> damaged = {gz + "junk", gz + "\x1f",
                                      gz + Gzip("") + "\x1f\x8b"};
  for (size_t at : {size_t{3}, size_t{40}, gz.size() / 3, gz.size() / 2,
                    gz.size() - 6, gz.size() - 2}) {
    std::string bytes = gz;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x55);
    damaged.push_back(bytes);
  }
  for (const std::string& bytes : damaged) {
    const std::string path = WriteTemp("strag_damaged.csv.gz", bytes);
    const Result<trace::OpsTable> whole = ReadWhole(path);
    EXPECT_TRUE(IsGzipError(whole, path, bytes.size()));
    ExpectSameAsWhole(path, {5, 64, 999, 1 << 16}, GzipEngine::kZlib);
    for (size_t block_bytes :
         {size_t{5}, size_t{64}, size_t{999}, size_t{1} << 16}) {
      for (bool threaded : {false, true}) {
        const Result<trace::OpsTable> isal =
            ReadOpsCsvFile(path, {.block_bytes = block_bytes,
                                  .inflate_on_thread = threaded,
                                  .gzip_engine = GzipEngine::kIsal});
        EXPECT_TRUE(IsGzipError(isal, path, bytes.size()))
            << "blocks of " << block_bytes << (threaded ? ", threaded" : "");
      }
    }
  }
}

// A CSV error in the text of a damaged member gives way to the damage, which
// the inflater reports only at the end of the member (here: a wrong CRC, at
// the same byte with either engine).
TEST(ReadOpsCsvFileTest, GzipDamageWinsOverCsvError) {
  std::string gz = Gzip(ManyRows(3) + "0,0,0,1,gc,0,abc,1\n" +
                        ManyRows(2000, /*header=*/false));
  gz[gz.size() - 6] = static_cast<char>(gz[gz.size() - 6] ^ 1);  // the CRC
  const std::string path = WriteTemp("strag_bad_crc.csv.gz", gz);
  for (GzipEngine engine : kEngines) {
    const Result<trace::OpsTable> table =
        ReadOpsCsvFile(path, {.gzip_engine = engine});
    EXPECT_TRUE(IsGzipError(table, path, gz.size())) << EngineName(engine);
    EXPECT_EQ(table.status().message(),
              path + ": gzip stream is corrupt at byte " +
                  std::to_string(gz.size() - 4) + ": incorrect data check")
        << EngineName(engine);
  }
  ExpectSameAsWhole(path, {64, 1000, 1 << 16});
}

// What `strag simulate --out` writes: many gzip members, each compressed
// on its own (ParallelGzipWriter, igzip where the build has it), read whole
// by either engine at any block size.
TEST(ReadOpsCsvFileTest, ParallelGzipWriterMembers) {
  const std::string csv = ManyRows(5000);
  std::string gz;
  ParallelGzipWriter writer(
      [&gz](std::string_view bytes) {
        gz.append(bytes);
        return Status::Ok();
      },
      {.chunk_bytes = 10000, .threads = 2});
  ASSERT_TRUE(writer.Append(csv).ok());
  ASSERT_TRUE(writer.Finish().ok());
  const std::string path = WriteTemp("strag_members.csv.gz", gz);
  const Result<trace::OpsTable> expected = ParseOpsCsv(csv, path);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  for (GzipEngine engine : kEngines) {
    const Result<trace::OpsTable> table =
        ReadOpsCsvFile(path, {.gzip_engine = engine});
    ASSERT_TRUE(table.ok()) << table.status().message();
    EXPECT_EQ(table->size(), 5000u);
    EXPECT_TRUE(SameTable(*table, *expected)) << EngineName(engine);
  }
  ExpectSameAsWhole(path, {7, 4096, 1 << 16});
}

// Concatenated members, cut inside a line, read as one text; the small last
// member makes the trailer's size hint unusable, which only costs growth.
TEST(ReadOpsCsvFileTest, ConcatenatedGzipMembers) {
  const std::string csv = ManyRows(2000);
  const size_t cut = csv.size() / 2 + 7;
  const std::string path =
      WriteTemp("strag_cat.csv.gz",
                Gzip(csv.substr(0, cut)) + Gzip("") + Gzip(csv.substr(cut)));
  const Result<trace::OpsTable> table = ReadOpsCsvFile(path);
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->size(), 2000u);
  EXPECT_TRUE(SameTable(*table, *ParseOpsCsv(csv, path)));
  ExpectSameAsWhole(path, {3, 64, 4096, 1 << 16});
}

// Empty files, plain or gzip, are "empty file" errors.
TEST(ReadOpsCsvFileTest, EmptyFiles) {
  const std::string plain = WriteTemp("strag_empty.csv", "");
  const Result<trace::OpsTable> table = ReadOpsCsvFile(plain);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().message(),
            plain + ": empty file (expected a header line)");
  ExpectSameAsWhole(plain, {1, 100});
  ExpectSameAsWhole(WriteTemp("strag_empty.csv.gz", Gzip("")), {1, 100});
}

// A file that cannot be opened or read is kNotFound, as with ReadFile.
TEST(ReadOpsCsvFileTest, MissingFileAndDirectory) {
  const Result<trace::OpsTable> missing =
      ReadOpsCsvFile("/nonexistent/strag/x.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot open /nonexistent/strag/x.csv: No such file or directory");
  const Result<trace::OpsTable> directory =
      ReadOpsCsvFile(::testing::TempDir());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(SameOutcome(directory, ReadWhole(::testing::TempDir())));
}

// The published ST trace reads the same streamed as whole, with block
// boundaries at odd places.
TEST(ReadOpsCsvFileGoldenTest, PublishedTraceSt) {
  const std::string path =
      std::string(STRAG_SHARED_DATA_DIR) + "/osdi25-whatif/trace-ST.csv.gz";
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "reference data not found at " << path;
  }
  const Result<trace::OpsTable> table = ReadOpsCsvFile(path);
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->size(), 6784u);
  ExpectSameAsWhole(path, {97, 4099, ReadOpsCsvOptions().block_bytes});
}

}  // namespace
}  // namespace strag::ingest
