// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/text_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ingest/common/gzip.h"
#include "ingest/common/text_reader.h"

namespace strag::ingest {
namespace {

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string SampleText() {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

struct Collected {
  Status status;
  std::vector<std::string> blocks;
};

// Collects the blocks of the file at `path`; the sink fails on block
// `fail_at` (and records it).
// With `refuse`, the sink's error refuses the text (sink_refused).
Collected Collect(const std::string& path, size_t block_bytes, bool threaded,
                  size_t fail_at = SIZE_MAX, bool refuse = false) {
  Collected run;
  Result<std::unique_ptr<TextReader>> reader =
      TextReader::Open(path, block_bytes);
  if (!reader.ok()) return {reader.status(), {}};
  const TextBlockOptions options{.block_bytes = block_bytes,
                                 .inflate_on_thread = threaded,
                                 .sink_refused = [refuse] { return refuse; }};
  run.status = ForEachTextBlock(reader->get(), options,
                                [&](std::string_view block) -> Status {
                                  run.blocks.emplace_back(block);
                                  if (run.blocks.size() - 1 == fail_at)
                                    return InvalidInput("sink");
                                  return Status::Ok();
                                });
  return run;
}

// Plain and gzip, threaded or not: the same blocks, all full but the last,
// which together are the text.
TEST(TextBlocksTest, SameBlocksThreadedOrNot) {
  const std::string text = SampleText();
  const Result<std::string> gz = GzipCompress(text);
  ASSERT_TRUE(gz.ok());
  for (const std::string& path : {WriteTemp("strag_blocks.txt", text),
                                  WriteTemp("strag_blocks.gz", *gz)}) {
    for (size_t block_bytes : {size_t{1}, size_t{333}, size_t{1} << 20}) {
      const Collected plain = Collect(path, block_bytes, false);
      const Collected threaded = Collect(path, block_bytes, true);
      ASSERT_TRUE(plain.status.ok()) << plain.status.message();
      ASSERT_TRUE(threaded.status.ok()) << threaded.status.message();
      EXPECT_EQ(plain.blocks, threaded.blocks);
      std::string joined;
      for (size_t i = 0; i < plain.blocks.size(); ++i) {
        if (i + 1 < plain.blocks.size()) {
          EXPECT_EQ(plain.blocks[i].size(), block_bytes);
        }
        joined += plain.blocks[i];
      }
      EXPECT_EQ(joined, text);
    }
  }
}

// A sink error ends the loop (the thread is joined, nothing hangs) and is
// returned; the sink is not called again.
TEST(TextBlocksTest, SinkErrorStops) {
  const Result<std::string> gz = GzipCompress(SampleText());
  ASSERT_TRUE(gz.ok());
  const std::string path = WriteTemp("strag_sink_error.gz", *gz);
  for (bool threaded : {false, true}) {
    for (size_t fail_at : {size_t{0}, size_t{3}}) {
      const Collected run = Collect(path, 100, threaded, fail_at);
      EXPECT_EQ(run.status.message(), "sink");
      EXPECT_EQ(run.blocks.size(), fail_at + 1);
    }
  }
}

// Damage in the gzip stream wins over a sink error, and the sink sees every
// block inflated before the damage.
TEST(TextBlocksTest, GzipErrorAfterItsText) {
  const std::string text = SampleText();
  const Result<std::string> gz = GzipCompress(text);
  ASSERT_TRUE(gz.ok());
  const std::string path =
      WriteTemp("strag_cut_blocks.gz", gz->substr(0, gz->size() / 2));
  const Result<std::string> whole =
      MaybeGunzip(gz->substr(0, gz->size() / 2), path);
  ASSERT_FALSE(whole.ok());
  for (bool threaded : {false, true}) {
    const Collected run = Collect(path, 64, threaded);
    EXPECT_EQ(run.status.message(), whole.status().message());
    ASSERT_GT(run.blocks.size(), 10u);
    std::string joined;
    for (const std::string& block : run.blocks) joined += block;
    EXPECT_EQ(joined, text.substr(0, joined.size()));
    const Collected failing = Collect(path, 64, threaded, /*fail_at=*/2);
    EXPECT_EQ(failing.status.message(), whole.status().message());
    EXPECT_EQ(failing.blocks.size(), 3u);
  }
}

// A refusing sink error wins over damage later in the stream, which is
// then not inflated at all (a gzip bomb is not read to its end): the same
// threaded or not.
TEST(TextBlocksTest, RefusalStopsBeforeTheDamage) {
  const std::string text = SampleText();
  const Result<std::string> gz = GzipCompress(text);
  ASSERT_TRUE(gz.ok());
  const std::string path =
      WriteTemp("strag_refused_blocks.gz", gz->substr(0, gz->size() / 2));
  for (bool threaded : {false, true}) {
    const Collected run =
        Collect(path, 64, threaded, /*fail_at=*/2, /*refuse=*/true);
    EXPECT_EQ(run.status.message(), "sink");
    EXPECT_EQ(run.blocks.size(), 3u);
  }
}

// The text size a reader expects: the file's for plain text, the trailer's
// for one gzip member, and for several (whose trailer tells only the last
// one) an estimate from the first bytes, at or above the text and within a
// factor that reserving for it stays cheap; exact when the first read holds
// the whole stream. No hint and no error for damage.
TEST(TextBlocksTest, TextSizeHints) {
  std::string text;
  uint64_t x = 1;
  for (int i = 0; i < 40000; ++i) {  // ~1.1 MB of rows
    x = x * 6364136223846793005u + 1442695040888963407u;
    text += std::to_string(i % 64) + ",forward-compute," +
            std::to_string(x >> 40) + "\n";
  }
  // Three members of a third each and a short last one, as a parallel
  // writer leaves them: the trailer says 100 bytes.
  std::string members;
  const size_t third = (text.size() - 100) / 3;
  for (size_t at = 0; at < text.size(); at += third) {
    const Result<std::string> gz =
        GzipCompress(text.substr(at, std::min(third, text.size() - at)));
    ASSERT_TRUE(gz.ok());
    members += *gz;
  }
  const Result<std::string> one = GzipCompress(text);
  ASSERT_TRUE(one.ok());
  const auto hint = [](const std::string& name, const std::string& bytes,
                       size_t block_bytes) -> uint64_t {
    Result<std::unique_ptr<TextReader>> reader =
        TextReader::Open(WriteTemp(name, bytes), block_bytes);
    EXPECT_TRUE(reader.ok());
    return reader.ok() ? (*reader)->text_bytes_hint() : 0;
  };
  EXPECT_EQ(hint("strag_hint.txt", text, 1 << 16), text.size());
  EXPECT_EQ(hint("strag_hint_one.gz", *one, 1 << 16), text.size());
  for (const size_t block_bytes : {size_t{64} << 10, size_t{1} << 20}) {
    const uint64_t estimate =
        hint("strag_hint_members.gz", members, block_bytes);
    EXPECT_GE(estimate, text.size()) << block_bytes;
    EXPECT_LE(estimate, text.size() * 3 / 2) << block_bytes;
  }
  // Too short a first read, or damage: no estimate, and the trailer's 100
  // bytes are no hint either.
  EXPECT_EQ(hint("strag_hint_members.gz", members, 512), 0u);
  std::string damaged = members;
  damaged[12] ^= 0x55;
  EXPECT_EQ(hint("strag_hint_damaged.gz", damaged, 1 << 16), 0u);
  // Members that the first read holds whole give their size exactly.
  const std::string small = text.substr(0, 50000);
  const Result<std::string> head = GzipCompress(small.substr(0, 20000));
  const Result<std::string> tail = GzipCompress(small.substr(20000));
  const Result<std::string> last = GzipCompress("7\n");
  ASSERT_TRUE(head.ok() && tail.ok() && last.ok());
  EXPECT_EQ(hint("strag_hint_small.gz", *head + *tail + *last, 1 << 20),
            small.size() + 2);
}

}  // namespace
}  // namespace strag::ingest
