// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/gunzip_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ingest/common/gzip.h"

namespace strag::ingest {
namespace {

std::string SampleText() {
  std::string text;
  for (int i = 0; i < 4000; ++i) {
    text += std::to_string(i) + ",backward-compute," + std::to_string(i * 13) +
            "\n";
  }
  return text;
}

std::string Compress(std::string_view text) {
  Result<std::string> gz = GzipCompress(text);
  EXPECT_TRUE(gz.ok()) << gz.status().message();
  return gz.ok() ? *gz : std::string();
}

// Inflates `gz` handing over `in_piece` compressed bytes at a time (plus
// what the stream left unconsumed) into outputs of `out_piece` bytes.
Result<std::string> InflateInPieces(std::string_view gz, size_t in_piece,
                                    size_t out_piece,
                                    GzipEngine engine = GzipEngine::kZlib) {
  GunzipStream stream("t.gz", engine);
  std::string text;
  std::string out(out_piece, '\0');
  size_t in_pos = 0;
  size_t available = std::min(in_piece, gz.size());
  while (!stream.done()) {
    const bool last = available == gz.size();
    ASSIGN_OR_RETURN(const GunzipStream::Progress progress,
                     stream.Inflate(gz.substr(in_pos, available - in_pos), last,
                                    out.data(), out.size()));
    in_pos += progress.in_bytes;
    text.append(out.data(), progress.out_bytes);
    if (progress.in_bytes == 0 && progress.out_bytes == 0 && !stream.done()) {
      if (last) return Internal("no progress on the last input");
      available = std::min(available + in_piece, gz.size());
    }
  }
  return text;
}

// Any split of input and output gives MaybeGunzip's text, also across
// concatenated members (whose magic may be split too).
TEST(GunzipStreamTest, AnyPiecesGiveTheText) {
  const std::string text = SampleText();
  const std::string gz = Compress(text.substr(0, 5000)) + Compress("") +
                         Compress(text.substr(5000));
  for (size_t in_piece :
       {size_t{1}, size_t{2}, size_t{3}, size_t{1000}, gz.size()}) {
    for (size_t out_piece : {size_t{1}, size_t{7}, size_t{1} << 16}) {
      const Result<std::string> back = InflateInPieces(gz, in_piece, out_piece);
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(*back, text) << in_piece << " " << out_piece;
    }
  }
}

// Truncation and damage are reported at the same compressed byte as by
// MaybeGunzip, however the input is split.
TEST(GunzipStreamTest, ErrorsMatchMaybeGunzip) {
  const std::string gz = Compress(SampleText());
  std::vector<std::string> damaged = {gz.substr(0, gz.size() / 2),
                                      gz.substr(0, 2), gz + "x",
                                      gz + "\x1f\x8b\x08"};
  for (size_t at : {size_t{3}, size_t{30}, gz.size() / 2, gz.size() - 5}) {
    std::string bytes = gz;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x21);
    damaged.push_back(bytes);
  }
  for (const std::string& bytes : damaged) {
    const Result<std::string> expected = MaybeGunzip(bytes, "t.gz");
    ASSERT_FALSE(expected.ok());
    for (size_t in_piece : {size_t{1}, size_t{5}, size_t{4096}}) {
      for (size_t out_piece : {size_t{1}, size_t{300}, size_t{1} << 20}) {
        const Result<std::string> back =
            InflateInPieces(bytes, in_piece, out_piece);
        ASSERT_FALSE(back.ok());
        EXPECT_EQ(back.status().message(), expected.status().message())
            << in_piece << " " << out_piece;
      }
    }
  }
}

// ISA-L gives the same text, for any split, across members too.
TEST(GunzipStreamTest, IsalAnyPiecesGiveTheText) {
  if (!IsalAvailable()) GTEST_SKIP() << "built without ISA-L";
  const std::string text = SampleText();
  const std::string gz = Compress(text.substr(0, 5000)) + Compress("") +
                         Compress(text.substr(5000));
  for (size_t in_piece :
       {size_t{1}, size_t{2}, size_t{3}, size_t{1000}, gz.size()}) {
    for (size_t out_piece : {size_t{1}, size_t{7}, size_t{1} << 16}) {
      const Result<std::string> back =
          InflateInPieces(gz, in_piece, out_piece, GzipEngine::kIsal);
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(*back, text) << in_piece << " " << out_piece;
    }
  }
}

// Truncation, a bad header and junk after a member: ISA-L says what zlib
// says, at the same byte. Damaged deflate data or checksums are corrupt
// for both, where each engine notices.
TEST(GunzipStreamTest, IsalErrorsLikeZlib) {
  if (!IsalAvailable()) GTEST_SKIP() << "built without ISA-L";
  const std::string gz = Compress(SampleText());
  std::string flags = gz;
  flags[3] = '\xff';
  std::string method = gz;
  method[2] = 7;
  for (const std::string& bytes :
       {gz.substr(0, gz.size() / 2), gz.substr(0, 2), gz.substr(0, 5), gz + "x",
        gz + "\x1f\x8b\x08", flags, method}) {
    const Result<std::string> zlib = InflateInPieces(bytes, 4096, 1 << 20);
    ASSERT_FALSE(zlib.ok());
    for (size_t in_piece : {size_t{1}, size_t{5}, size_t{4096}}) {
      const Result<std::string> isal =
          InflateInPieces(bytes, in_piece, 300, GzipEngine::kIsal);
      ASSERT_FALSE(isal.ok());
      EXPECT_EQ(isal.status().message(), zlib.status().message()) << in_piece;
    }
  }
  for (size_t at : {size_t{30}, gz.size() / 2, gz.size() - 6, gz.size() - 2}) {
    std::string bytes = gz;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x21);
    const Result<std::string> isal =
        InflateInPieces(bytes, 4096, 1 << 20, GzipEngine::kIsal);
    ASSERT_FALSE(isal.ok()) << at;
    EXPECT_EQ(isal.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(isal.status().message().rfind(
                  "t.gz: gzip stream is corrupt at byte ", 0),
              0u)
        << isal.status().message();
  }
}

}  // namespace
}  // namespace strag::ingest
