// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/gzip.h"

#include <gtest/gtest.h>

#include <string>

namespace strag::ingest {
namespace {

std::string Compress(std::string_view text) {
  Result<std::string> gz = GzipCompress(text);
  EXPECT_TRUE(gz.ok()) << gz.status().message();
  return gz.ok() ? *gz : std::string();
}

std::string SampleText() {
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text +=
        std::to_string(i) + ",forward-compute," + std::to_string(i * 7) + "\n";
  }
  return text;
}

// Compress then MaybeGunzip gives the input back; the output is gzip.
TEST(GzipTest, RoundTrip) {
  const std::string text = SampleText();
  const std::string gz = Compress(text);
  EXPECT_TRUE(IsGzip(gz));
  EXPECT_LT(gz.size(), text.size());
  const Result<std::string> back = MaybeGunzip(gz, "t.csv.gz");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, text);
  const Result<std::string> empty = MaybeGunzip(Compress(""), "e.gz");
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(*empty, "");
}

// Bytes without the gzip magic come back unchanged.
TEST(GzipTest, PassesPlainBytesThrough) {
  const Result<std::string> plain = MaybeGunzip("a,b\n1,2\n", "t.csv");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "a,b\n1,2\n");
  const Result<std::string> one = MaybeGunzip("\x1f", "t.csv");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, "\x1f");
}

// Concatenated members inflate into one output; a small last member (the
// trailer's size hint) makes the output buffer grow.
TEST(GzipTest, ConcatenatedMembers) {
  const std::string big(3 << 20, 'x');
  const Result<std::string> back =
      MaybeGunzip(Compress(big) + Compress("tail"), "cat.gz");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, big + "tail");
}

// A stream cut in half is reported as truncated at the byte it ends.
TEST(GzipTest, TruncatedStream) {
  const std::string gz = Compress(SampleText());
  const std::string half = gz.substr(0, gz.size() / 2);
  const Result<std::string> back = MaybeGunzip(half, "trace.csv.gz");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(back.status().message(),
            "trace.csv.gz: gzip stream is truncated at compressed byte " +
                std::to_string(half.size()));
  const Result<std::string> header_only = MaybeGunzip(gz.substr(0, 5), "h.gz");
  ASSERT_FALSE(header_only.ok());
  EXPECT_EQ(header_only.status().message(),
            "h.gz: gzip stream is truncated at compressed byte 5");
}

// Damaged bytes are reported as corruption with zlib's reason.
TEST(GzipTest, CorruptStream) {
  std::string gz = Compress(SampleText());
  gz[3] = '\xff';  // reserved flag bits in the header
  const Result<std::string> bad_header = MaybeGunzip(gz, "trace.csv.gz");
  ASSERT_FALSE(bad_header.ok());
  EXPECT_EQ(bad_header.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(bad_header.status().message().find(
                "trace.csv.gz: gzip stream is corrupt at byte "),
            std::string::npos)
      << bad_header.status().message();

  std::string bad_crc = Compress(SampleText());
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // inside the CRC-32 trailer
  const Result<std::string> crc = MaybeGunzip(bad_crc, "c.gz");
  ASSERT_FALSE(crc.ok());
  EXPECT_NE(crc.status().message().find("c.gz: gzip stream is corrupt at byte"),
            std::string::npos)
      << crc.status().message();

  const Result<std::string> trailing =
      MaybeGunzip(Compress("x") + "junk", "j.gz");
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.status().message().find("unexpected data after the end"),
            std::string::npos)
      << trailing.status().message();
}

// A text larger than asked for is refused before more is held.
TEST(GzipTest, MaxTextBytes) {
  const std::string gz = Compress(std::string(100000, 'z'));
  EXPECT_EQ(MaybeGunzip(gz, "z.gz", 100000).value().size(), 100000u);
  const Result<std::string> over = MaybeGunzip(gz, "z.gz", 99999);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(),
            "z.gz: the gzip text is larger than 99999 bytes");
}

// A member that says its size: every reader still inflates it (alone and
// after others), the size is the member's, and other headers are refused
// or not recognised.
TEST(GzipTest, MembersThatSayTheirSize) {
  const std::string text = "dp_rank,stage\n0,1\n2,3\n";
  std::string member;
  ASSERT_TRUE(GzipCompressFast(text, &member).ok());
  const std::string plain = member;
  EXPECT_EQ(SizedMemberBytes(plain), 0u);
  ASSERT_TRUE(AddMemberSize(&member));
  EXPECT_EQ(member.size(), plain.size() + kSizedMemberHeaderBytes - 10);
  EXPECT_EQ(SizedMemberBytes(member), member.size());
  EXPECT_EQ(SizedMemberBytes(std::string_view(member).substr(0, 23)), 0u);
  for (const std::string& gz : {member, member + plain + member}) {
    const Result<std::string> back = MaybeGunzip(gz, "t.gz");
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, gz.size() == member.size() ? text : text + text + text);
  }
  // Another header (here FNAME set) is left alone.
  std::string named = plain;
  named[3] = 0x08;
  EXPECT_FALSE(AddMemberSize(&named));
  EXPECT_EQ(named, [&] { std::string n = plain; n[3] = 0x08; return n; }());
  std::string text_only = "not gzip at all, long enough";
  EXPECT_FALSE(AddMemberSize(&text_only));
}

}  // namespace
}  // namespace strag::ingest
