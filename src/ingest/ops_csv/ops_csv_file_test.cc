// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/common/file.h"
#include "ingest/common/gzip.h"
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

// ReadOpsCsvFile(path) matches ReadWhole(path) for every block size in
// `block_sizes`, threaded and not.
void ExpectSameAsWhole(const std::string& path,
                       const std::vector<size_t>& block_sizes) {
  const Result<trace::OpsTable> expected = ReadWhole(path);
  for (size_t block_bytes : block_sizes) {
    for (bool threaded : {false, true}) {
      const ReadOpsCsvOptions options{.block_bytes = block_bytes,
                                      .inflate_on_thread = threaded};
      ASSERT_TRUE(SameOutcome(ReadOpsCsvFile(path, options), expected))
          << path << " with blocks of " << block_bytes << " bytes"
          << (threaded ? ", threaded" : "");
    }
  }
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

// A cut gzip file gives MaybeGunzip's message (the byte offset where the
// stream ends), not a CSV error about its partial last line.
TEST(ReadOpsCsvFileTest, TruncatedGzip) {
  const std::string gz = Gzip(ManyRows(3000));
  for (size_t cut : {size_t{5}, size_t{12}, gz.size() / 2, gz.size() - 1}) {
    const std::string path = WriteTemp("strag_cut.csv.gz", gz.substr(0, cut));
    const Result<trace::OpsTable> table = ReadOpsCsvFile(path);
    ASSERT_FALSE(table.ok());
    EXPECT_EQ(table.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(table.status().message(),
              path + ": gzip stream is truncated at compressed byte " +
                  std::to_string(cut));
    ExpectSameAsWhole(path, {7, 64, 1000, 1 << 16});
  }
}

// Damage anywhere (header, deflate data, CRC trailer, junk after the end)
// gives the whole-file outcome, even where the damaged data inflates to text
// that fails to parse before zlib notices.
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
    ASSERT_FALSE(whole.ok());
    EXPECT_NE(whole.status().message().find("gzip stream is"),
              std::string::npos)
        << whole.status().message();
    ExpectSameAsWhole(path, {5, 64, 999, 1 << 16});
  }
}

// A CSV error in the text of a damaged member gives way to the damage, which
// zlib reports only at the end of the member (here: a wrong CRC).
TEST(ReadOpsCsvFileTest, GzipDamageWinsOverCsvError) {
  std::string gz = Gzip(ManyRows(3) + "0,0,0,1,gc,0,abc,1\n" +
                        ManyRows(2000, /*header=*/false));
  gz[gz.size() - 6] = static_cast<char>(gz[gz.size() - 6] ^ 1);  // the CRC
  const std::string path = WriteTemp("strag_bad_crc.csv.gz", gz);
  const Result<trace::OpsTable> table = ReadOpsCsvFile(path);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().message(),
            path + ": gzip stream is corrupt at byte " +
                std::to_string(gz.size() - 4) + ": incorrect data check");
  ExpectSameAsWhole(path, {64, 1000, 1 << 16});
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
