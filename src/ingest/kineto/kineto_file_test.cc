// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "ingest/common/gzip.h"
#include "ingest/kineto/kineto_test_util.h"

namespace strag::ingest {
namespace {

namespace fs = std::filesystem;
using kineto::RankTraceDifference;

// A fresh folder for this test process.
const fs::path& TempDir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() /
                 ("strag_kineto_test_" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Removes TempDir() after the last test.
class RemoveTempDir : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code error;
    fs::remove_all(TempDir(), error);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveTempDir =
    ::testing::AddGlobalTestEnvironment(new RemoveTempDir);

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const fs::path path = TempDir() / name;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

std::string Gzip(const std::string& text) {
  Result<std::string> gz = GzipCompress(text);
  EXPECT_TRUE(gz.ok());
  return gz.ok() ? *gz : "";
}

std::string SmallTrace() {
  kineto::SyntheticTraceSpec spec;
  spec.steps = 3;
  spec.kernels_per_step = 40;
  return kineto::SyntheticKinetoTrace(spec);
}

// The file reader gives what the whole-text parser gives, for plain and
// gzip files (named .gz or not), any block size, either gzip engine,
// threaded or not.
TEST(ReadKinetoFileTest, SameAsParsingTheWholeText) {
  const std::string json = SmallTrace();
  const std::string plain = WriteTemp("rank-3.json", json);
  const std::string gz = WriteTemp("rank-3.json.gz", Gzip(json));
  const std::string gz_unnamed = WriteTemp("rank-3.trace", Gzip(json));
  for (const std::string& path : {plain, gz, gz_unnamed}) {
    const Result<trace::RankTrace> whole = ParseKinetoTrace(json, path);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    for (size_t block : {size_t{1} << 10, size_t{4093}, size_t{256} << 10}) {
      for (GzipEngine engine : {GzipEngine::kZlib, GzipEngine::kIsal}) {
        for (bool thread : {false, true}) {
          ReadKinetoOptions options;
          options.block_bytes = block;
          options.gzip_engine = engine;
          options.inflate_on_thread = thread;
          const Result<trace::RankTrace> read = ReadKinetoFile(path, options);
          ASSERT_TRUE(read.ok()) << read.status().message();
          EXPECT_EQ(RankTraceDifference(*read, *whole), "")
              << path << " " << block << " " << thread;
        }
      }
    }
  }
}

// A cut gzip file is reported as such (the compressed offset where it
// ends), not as truncated JSON, with either engine.
TEST(ReadKinetoFileTest, TruncatedGzip) {
  const std::string gz = Gzip(SmallTrace());
  for (size_t cut : {size_t{5}, size_t{12}, gz.size() / 2, gz.size() - 1}) {
    const std::string path = WriteTemp("cut.json.gz", gz.substr(0, cut));
    for (GzipEngine engine : {GzipEngine::kZlib, GzipEngine::kIsal}) {
      ReadKinetoOptions options;
      options.gzip_engine = engine;
      const Result<trace::RankTrace> read = ReadKinetoFile(path, options);
      ASSERT_FALSE(read.ok());
      EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput);
      EXPECT_EQ(read.status().message(),
                path + ": gzip stream is truncated at compressed byte " +
                    std::to_string(cut));
    }
  }
}

TEST(ReadKinetoFileTest, CorruptGzipAndBadJson) {
  std::string gz = Gzip(SmallTrace());
  gz[gz.size() / 2] = static_cast<char>(gz[gz.size() / 2] ^ 0x55);
  const std::string corrupt = WriteTemp("corrupt.json.gz", gz);
  const Result<trace::RankTrace> read = ReadKinetoFile(corrupt);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(corrupt +
                                         ": gzip stream is corrupt at byte "),
            std::string::npos)
      << read.status().message();

  const std::string truncated_json =
      WriteTemp("rank-1.json", SmallTrace().substr(0, 5000));
  EXPECT_EQ(
      ReadKinetoFile(truncated_json)
          .status()
          .message()
          .rfind(truncated_json +
                     ": truncated JSON: the text ends at byte 5000 inside "
                     "traceEvents",
                 0),
      0u);
  EXPECT_EQ(
      ReadKinetoFile((TempDir() / "missing.json").string()).status().code(),
      StatusCode::kNotFound);
}

TEST(ListKinetoInputsTest, FolderOrFile) {
  const fs::path dir = TempDir() / "job";
  WriteTemp("job/rank-1.pt.trace.json.gz", Gzip("{}"));
  WriteTemp("job/rank-0.pt.trace.json", "{}");
  WriteTemp("job/notes.txt", "x");
  WriteTemp("job/rank-2.json.gz.tmp", "x");
  WriteTemp("job/sub/rank-3.json", "{}");
  const Result<std::vector<std::string>> files = ListKinetoInputs(dir.string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{
                        (dir / "rank-0.pt.trace.json").string(),
                        (dir / "rank-1.pt.trace.json.gz").string()}));
  const std::string one = (dir / "notes.txt").string();
  EXPECT_EQ(*ListKinetoInputs(one), std::vector<std::string>{one});
  EXPECT_EQ(ListKinetoInputs((dir / "nope").string()).status().code(),
            StatusCode::kNotFound);
  fs::create_directories(TempDir() / "empty");
  EXPECT_EQ(ListKinetoInputs((TempDir() / "empty").string()).status().code(),
            StatusCode::kInvalidInput);
}

}  // namespace
}  // namespace strag::ingest
