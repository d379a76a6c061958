// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "ingest/common/gzip.h"

namespace strag::ingest {
namespace {

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A missing file is kNotFound naming the path and the reason.
TEST(FileTest, MissingFile) {
  const Result<std::string> bytes = ReadFile("/nonexistent/strag/x.csv");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(bytes.status().message(),
            "cannot open /nonexistent/strag/x.csv: No such file or directory");
}

// A directory opens but cannot be read.
TEST(FileTest, Directory) {
  const Result<std::string> bytes = ReadFile(::testing::TempDir());
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bytes.status().message().find("cannot read"), std::string::npos);
}

// ReadFileMaybeGz inflates by content, whatever the file name says, and
// names the file in its errors.
TEST(FileTest, ReadsPlainAndGzipFiles) {
  const std::string text = "a,b\n1,2\n";
  const Result<std::string> gz = GzipCompress(text);
  ASSERT_TRUE(gz.ok());
  const std::string plain_path = WriteTemp("strag_file_test.csv", text);
  const std::string gz_path = WriteTemp("strag_file_test.csv.gz", *gz);
  const std::string cut_path =
      WriteTemp("strag_file_test_cut.gz", gz->substr(0, gz->size() - 3));
  EXPECT_EQ(ReadFile(gz_path).value(), *gz);
  EXPECT_EQ(ReadFileMaybeGz(plain_path).value(), text);
  EXPECT_EQ(ReadFileMaybeGz(gz_path).value(), text);
  const Result<std::string> cut = ReadFileMaybeGz(cut_path);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(cut.status().message().find(cut_path + ": gzip stream is "
                                                   "truncated"),
            std::string::npos)
      << cut.status().message();
}

// A file larger than asked for (or endless, as /dev/zero) is refused after
// reading one byte past the limit, not held whole.
TEST(FileTest, MaxBytes) {
  const std::string path = WriteTemp("strag_file_max.txt", "0123456789");
  EXPECT_EQ(ReadFile(path, 10).value(), "0123456789");
  const Result<std::string> over = ReadFile(path, 9);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(over.status().message(),
            path + ": larger than 9 bytes, more than such a file holds");
  const Result<std::string> zero = ReadFile("/dev/zero", 1 << 20);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(),
            "/dev/zero: larger than 1 MiB, more than such a file holds");
}

}  // namespace
}  // namespace strag::ingest
