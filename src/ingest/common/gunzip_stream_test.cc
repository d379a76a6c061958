// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/gunzip_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>

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

// Truncation, a bad header, a wrong CRC-32 or ISIZE and junk after a
// member: ISA-L says what zlib says, at the same byte, however the input is
// cut. Damaged deflate data is corrupt for both, where each engine notices.
TEST(GunzipStreamTest, IsalErrorsLikeZlib) {
  if (!IsalAvailable()) GTEST_SKIP() << "built without ISA-L";
  const std::string gz = Compress(SampleText());
  std::string flags = gz;
  flags[3] = '\xff';
  std::string method = gz;
  method[2] = 7;
  std::string crc = gz;
  crc[gz.size() - 6] = static_cast<char>(crc[gz.size() - 6] ^ 0x21);
  std::string isize = gz;
  isize[gz.size() - 2] = static_cast<char>(isize[gz.size() - 2] ^ 0x21);
  for (const std::string& bytes :
       {gz.substr(0, gz.size() / 2), gz.substr(0, 2), gz.substr(0, 5),
        gz.substr(0, gz.size() - 1), gz + "x", gz + "\x1f\x8b\x08", flags,
        method, crc, isize, gz + crc}) {
    const Result<std::string> zlib = InflateInPieces(bytes, 4096, 1 << 20);
    ASSERT_FALSE(zlib.ok());
    for (size_t in_piece : {size_t{1}, size_t{5}, size_t{4096}}) {
      const Result<std::string> isal =
          InflateInPieces(bytes, in_piece, 300, GzipEngine::kIsal);
      ASSERT_FALSE(isal.ok());
      EXPECT_EQ(isal.status().message(), zlib.status().message()) << in_piece;
    }
  }
  for (size_t at : {size_t{30}, gz.size() / 2}) {
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

// The optional header fields (FEXTRA, FNAME, FCOMMENT, FHCRC), cut
// anywhere: the same text, or the same "header crc mismatch", from both
// engines (ISA-L's own header reader would refuse a right header CRC cut
// between two calls).
TEST(GunzipStreamTest, OptionalHeaderFieldsInPieces) {
  const std::string text = SampleText();
  const std::string gz = Compress(text);
  std::string header = gz.substr(0, 10);
  header[3] = 0x02 | 0x04 | 0x08 | 0x10;
  header += std::string{'\x05', '\0'} + "extra";        // FEXTRA: 5 bytes
  header += std::string("trace.csv\0a comment\0", 20);  // FNAME, FCOMMENT
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(header.data()),
                          static_cast<uInt>(header.size()));
  for (unsigned wrong : {0u, 1u}) {
    const unsigned crc16 = static_cast<unsigned>(crc & 0xffff) ^ wrong;
    const std::string bytes = header + static_cast<char>(crc16 & 0xff) +
                              static_cast<char>(crc16 >> 8) + gz.substr(10);
    for (size_t in_piece : {size_t{1}, size_t{3}, size_t{20}, bytes.size()}) {
      for (GzipEngine engine : {GzipEngine::kZlib, GzipEngine::kIsal}) {
        const Result<std::string> back =
            InflateInPieces(bytes + bytes, in_piece, 1000, engine);
        if (wrong == 0) {
          ASSERT_TRUE(back.ok()) << back.status().message();
          EXPECT_EQ(*back, text + text) << in_piece;
        } else {
          ASSERT_FALSE(back.ok());
          EXPECT_EQ(back.status().message(),
                    "t.gz: gzip stream is corrupt at byte " +
                        std::to_string(header.size() + 2) +
                        ": header crc mismatch")
              << in_piece;
        }
      }
    }
  }
}

// Damage anywhere, input cut anywhere: ISA-L's error names a byte inside
// the stream, not before the damage (its own input counts, which can wrap
// after damaged data, are not used).
TEST(GunzipStreamTest, IsalCorruptByteIsInTheStream) {
  if (!IsalAvailable()) GTEST_SKIP() << "built without ISA-L";
  const std::string gz = Compress(SampleText());
  const std::string prefix = "t.gz: gzip stream is ";
  for (size_t at = 10; at < gz.size(); at += 37) {
    std::string bytes = gz;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x55);
    for (size_t in_piece : {size_t{64}, size_t{999}, bytes.size()}) {
      const Result<std::string> isal =
          InflateInPieces(bytes, in_piece, 1 << 16, GzipEngine::kIsal);
      ASSERT_FALSE(isal.ok()) << at;
      EXPECT_EQ(isal.status().code(), StatusCode::kInvalidInput);
      const std::string& message = isal.status().message();
      ASSERT_EQ(message.rfind(prefix, 0), 0u) << message;
      const size_t number = message.find_first_of("0123456789");
      ASSERT_NE(number, std::string::npos) << message;
      const uint64_t byte = std::stoull(message.substr(number));
      EXPECT_GE(byte, at) << message;
      EXPECT_LE(byte, bytes.size()) << message;
    }
  }
}

}  // namespace
}  // namespace strag::ingest
