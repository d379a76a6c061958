// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/parallel_gzip_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "ingest/common/gzip.h"

#define ZLIB_CONST
#include <zlib.h>

namespace strag::ingest {
namespace {

// Text that compresses like a CSV: rows with varying numbers.
std::string Rows(size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    text += std::to_string(i % 97) + ",forward-compute," +
            std::to_string(i * 7919 % 1000003) + "\n";
  }
  return text;
}

// The number of gzip members in `gz` (each inflated on its own by zlib),
// or -1 when a member is damaged.
int CountMembers(std::string_view gz) {
  int members = 0;
  std::string out(1 << 16, '\0');
  while (!gz.empty()) {
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return -1;
    z.next_in = reinterpret_cast<const Bytef*>(gz.data());
    z.avail_in = static_cast<uInt>(gz.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      rc = inflate(&z, Z_NO_FLUSH);
    }
    gz.remove_prefix(gz.size() - z.avail_in);
    inflateEnd(&z);
    if (rc != Z_STREAM_END) return -1;
    ++members;
  }
  return members;
}

struct Written {
  std::string gz;
  Status status;
};

// Writes `text` through a writer of `chunk` bytes and `threads` threads, in
// pieces of `piece` bytes appended to text() (or Append() when `append`).
Written Write(std::string_view text, size_t chunk, int threads, size_t piece,
              bool append) {
  Written w;
  ParallelGzipWriter writer(
      [&](std::string_view bytes) {
        w.gz.append(bytes);
        return Status::Ok();
      },
      {.chunk_bytes = chunk, .threads = threads});
  for (size_t at = 0; at < text.size() && w.status.ok(); at += piece) {
    const std::string_view part = text.substr(at, piece);
    if (append) {
      w.status = writer.Append(part);
    } else {
      writer.text()->append(part);
      w.status = writer.MaybeSubmit();
    }
  }
  if (w.status.ok()) w.status = writer.Finish();
  EXPECT_EQ(writer.text_bytes(), static_cast<int64_t>(text.size()));
  EXPECT_EQ(writer.compressed_bytes(), static_cast<int64_t>(w.gz.size()));
  return w;
}

TEST(ParallelGzipWriterTest, ChunksBecomeMembersOfTheSameText) {
  const std::string text = Rows(40000);  // ~1 MB
  for (int threads : {1, 2, 5}) {
    for (bool append : {false, true}) {
      const Written w = Write(text, 64 << 10, threads, 1000, append);
      ASSERT_TRUE(w.status.ok()) << w.status.message();
      // Chunks of at least 64 KiB: with Append exactly 64 KiB each.
      const int members = CountMembers(w.gz);
      EXPECT_GE(members, static_cast<int>(text.size() / (65 << 10)));
      if (append) {
        EXPECT_EQ(members, static_cast<int>((text.size() + 65535) / 65536));
      }
      const Result<std::string> back = MaybeGunzip(w.gz, "test.gz");
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(*back, text) << threads << " threads";
      EXPECT_LT(w.gz.size(), text.size() / 2);
    }
  }
}

TEST(ParallelGzipWriterTest, EmptyTextIsOneEmptyMember) {
  const Written w = Write("", 1 << 20, 2, 1, false);
  ASSERT_TRUE(w.status.ok());
  EXPECT_EQ(CountMembers(w.gz), 1);
  const Result<std::string> back = MaybeGunzip(w.gz, "test.gz");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "");
}

TEST(ParallelGzipWriterTest, SinkErrorStopsTheWriter) {
  int calls = 0;
  ParallelGzipWriter writer(
      [&](std::string_view) {
        ++calls;
        return IoError("cannot write out.gz: No space left on device");
      },
      {.chunk_bytes = 1000, .threads = 2});
  Status status;
  const std::string text = Rows(5000);
  for (size_t at = 0; at < text.size() && status.ok(); at += 500) {
    status = writer.Append(std::string_view(text).substr(at, 500));
  }
  if (status.ok()) status = writer.Finish();
  EXPECT_EQ(status.message(), "cannot write out.gz: No space left on device");
  EXPECT_EQ(calls, 1);
  // Later calls keep failing, without writing.
  EXPECT_FALSE(writer.Finish().ok());
  EXPECT_EQ(calls, 1);
}

TEST(GzipCompressFastTest, OneMemberReadBack) {
  const std::string text = Rows(3000);
  std::string gz = "stale bytes are replaced";
  ASSERT_TRUE(GzipCompressFast(text, &gz).ok());
  EXPECT_EQ(CountMembers(gz), 1);
  const Result<std::string> back = MaybeGunzip(gz, "x.gz");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, text);
  // Incompressible bytes fit too (the output grows as needed).
  std::string noise(200000, '\0');
  uint64_t x = 1;
  for (char& c : noise) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    c = static_cast<char>(x >> 56);
  }
  ASSERT_TRUE(GzipCompressFast(noise, &gz).ok());
  const Result<std::string> noise_back = MaybeGunzip(gz, "x.gz");
  ASSERT_TRUE(noise_back.ok());
  EXPECT_EQ(*noise_back, noise);
}

}  // namespace
}  // namespace strag::ingest
