// SPDX-License-Identifier: Apache-2.0
// The Kineto reader's limits (issue 11): an event, a top-level value or a
// top-level token over its limit is refused with its byte, the same however
// the text is cut; whitespace between events is never held; binary bytes
// are refused at once, also by the file reader (a gzip bomb is not inflated
// to its end); a UTF-8 byte order mark is accepted.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <string_view>

#include "ingest/common/gzip.h"
#include "ingest/kineto/kineto_file.h"
#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/kineto_test_util.h"

namespace strag::ingest {
namespace {

using kineto::RankTraceDifference;

constexpr std::string_view kEvent =
    R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5})";

std::string Trace(std::string_view events) {
  return R"({"distributedInfo": {"rank": 0}, "traceEvents": [)" +
         std::string(events) + "]}";
}

KinetoOptions Limits(uint64_t event, uint64_t token = 1 << 20) {
  KinetoOptions options;
  options.limits.max_event_bytes = event;
  options.limits.max_token_bytes = token;
  return options;
}

std::string ErrorOf(const Result<trace::RankTrace>& r) {
  return r.ok() ? "ok" : r.status().message();
}

// The outcome of `json` in one piece, checked to be that of every cut in
// two (and of tiny batches).
Result<trace::RankTrace> EveryCut(std::string_view json,
                                  const KinetoOptions& options) {
  const Result<trace::RankTrace> whole =
      ParseKinetoTrace(json, "t.json", options);
  for (size_t i = 0; i <= json.size(); ++i) {
    KinetoOptions small = options;
    small.batch_bytes = 1 + i % 7;
    KinetoParser parser("t.json", small);
    Status status = parser.Feed(json.substr(0, i));
    if (status.ok()) status = parser.Feed(json.substr(i));
    const Result<trace::RankTrace> cut =
        status.ok() ? parser.Finish() : Result<trace::RankTrace>(status);
    EXPECT_EQ(ErrorOf(cut), ErrorOf(whole)) << "cut at " << i;
    if (cut.ok() && whole.ok()) {
      EXPECT_EQ(RankTraceDifference(*cut, *whole), "") << "cut at " << i;
    }
  }
  return whole;
}

// An event of exactly the limit is read; one byte more is refused at the
// byte where the event starts. Scalars between events count the same.
TEST(KinetoLimitsTest, EventLimitIsExact) {
  const std::string json =
      Trace(std::string(kEvent) + ", " + std::string(kEvent));
  const size_t at = json.find("{\"ph\"");
  EXPECT_TRUE(EveryCut(json, Limits(kEvent.size())).ok());
  EXPECT_EQ(ErrorOf(EveryCut(json, Limits(kEvent.size() - 1))),
            "t.json: byte " + std::to_string(at) + ": an event longer than " +
                std::to_string(kEvent.size() - 1) +
                " bytes (--max-event-bytes to raise)");
  const std::string scalar =
      Trace(std::string(kEvent) + ", \"" + std::string(300, 's') + "\"");
  EXPECT_EQ(ErrorOf(EveryCut(scalar, Limits(200))),
            "t.json: byte " + std::to_string(scalar.find("\"sss")) +
                ": an event longer than 200 bytes (--max-event-bytes to "
                "raise)");
}

// Whitespace between events is never an event, whatever its length (and
// not held: 8 MiB of it under a 1 KiB event limit, fed in small pieces).
TEST(KinetoLimitsTest, WhitespaceBetweenEventsStreams) {
  const std::string spaces(size_t{8} << 20, ' ');
  const std::string json =
      Trace(std::string(kEvent) + "," + spaces + std::string(kEvent) + spaces);
  KinetoParser parser("t.json", Limits(1024));
  for (size_t at = 0; at < json.size(); at += 4096) {
    ASSERT_TRUE(parser.Feed(std::string_view(json).substr(at, 4096)).ok());
  }
  const Result<trace::RankTrace> trace = parser.Finish();
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->size(), 2u);
}

// Top-level keys, strings and numbers: the token limit; other top-level
// values (objects, arrays): the event limit.
TEST(KinetoLimitsTest, TopLevelTokensAndValues) {
  const std::string name =
      R"({"traceName": ")" + std::string(100, 'n') + R"(", "traceEvents": []})";
  EXPECT_EQ(ErrorOf(EveryCut(name, Limits(1 << 20, 64))),
            "t.json: byte 14: a string longer than 64 bytes "
            "(--max-token-bytes to raise)");
  EXPECT_EQ(ErrorOf(EveryCut(name, Limits(1 << 20, 102))),
            "t.json: no rank: the trace has no distributedInfo.rank and the "
            "file name no 'rank<N>'");
  const std::string number =
      R"({"baseTimeNanoseconds": 1)" + std::string(80, '0') + "}";
  EXPECT_EQ(ErrorOf(EveryCut(number, Limits(1 << 20, 64))),
            "t.json: byte 24: a number longer than 64 bytes "
            "(--max-token-bytes to raise)");
  const std::string key = "{\"" + std::string(100, 'k') + "\": 1}";
  EXPECT_EQ(ErrorOf(EveryCut(key, Limits(1 << 20, 64))),
            "t.json: byte 1: a key longer than 64 bytes (--max-token-bytes "
            "to raise)");
  const std::string info = R"({"distributedInfo": {"rank": 0, "pg_config": [)" +
                           std::string(300, ' ') + R"(]}, "traceEvents": []})";
  EXPECT_EQ(ErrorOf(EveryCut(info, Limits(128))),
            "t.json: byte " + std::to_string(info.find("{\"rank\"")) +
                ": the value of \"distributedInfo\" longer than 128 bytes "
                "(--max-event-bytes to raise)");
}

// A UTF-8 byte order mark before the JSON is skipped (offsets still count
// it); half of one is not JSON.
TEST(KinetoLimitsTest, ByteOrderMark) {
  const std::string json = Trace(kEvent);
  const Result<trace::RankTrace> plain = EveryCut(json, {});
  const Result<trace::RankTrace> bom = EveryCut("\xEF\xBB\xBF" + json, {});
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_TRUE(bom.ok()) << bom.status().message();
  EXPECT_EQ(RankTraceDifference(*plain, *bom), "");
  EXPECT_EQ(ErrorOf(EveryCut("\xEF\xBB" + json, {})),
            "t.json: byte 0: not JSON: an incomplete UTF-8 byte order mark");
  EXPECT_EQ(ErrorOf(EveryCut(" \xEF\xBB\xBF" + json, {})),
            "t.json: byte 1: not JSON: expected '{' or '[' but found 0xef");
}

// Binary bytes: refused at the byte (and marked as a refusal).
TEST(KinetoLimitsTest, BinaryBytesAreRefused) {
  const std::string json =
      Trace(std::string(kEvent) + ", " + std::string(3, '\0'));
  EXPECT_EQ(ErrorOf(EveryCut(json, {})),
            "t.json: byte " + std::to_string(json.find('\0')) +
                ": a control byte 0x00 between events: binary data, not JSON");
  KinetoParser parser("t.json");
  EXPECT_FALSE(parser.Feed(std::string(100, '\0')).ok());
  EXPECT_TRUE(parser.refused());
  KinetoParser bad("t.json");
  EXPECT_FALSE(bad.Feed(Trace("{]")).ok() && bad.Finish().ok());
  EXPECT_FALSE(bad.refused());  // bad JSON, not a refusal
}

std::string WriteTemp(const std::string& name, std::string_view bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A gzip bomb of NULs (then damage) is refused at byte 0 without being
// inflated to its end, for every engine, threaded or not; a huge event in a
// gzip file is refused at the limit.
TEST(KinetoLimitsTest, FileReaderStopsAtARefusal) {
  const Result<std::string> member = GzipCompress(std::string(16 << 20, '\0'));
  ASSERT_TRUE(member.ok());
  std::string bomb;
  for (int i = 0; i < 4; ++i) bomb += *member;
  bomb += "\x1f\x8b damaged";
  const std::string path = WriteTemp("strag_rank0_bomb.json.gz", bomb);
  const std::string huge =
      Trace("{\"name\": \"" + std::string(size_t{3} << 20, 'e') + "\"}");
  const Result<std::string> event = GzipCompress(huge);
  ASSERT_TRUE(event.ok());
  const std::string big = WriteTemp("strag_rank0_event.json.gz", *event);
  for (GzipEngine engine : {GzipEngine::kZlib, GzipEngine::kIsal}) {
    for (bool threaded : {false, true}) {
      ReadKinetoOptions options;
      options.gzip_engine = engine;
      options.inflate_on_thread = threaded;
      EXPECT_EQ(ErrorOf(ReadKinetoFile(path, options)),
                path +
                    ": byte 0: not JSON: expected '{' or '[' but found "
                    "0x00");
      options.parse.limits.max_event_bytes = size_t{1} << 20;
      EXPECT_EQ(ErrorOf(ReadKinetoFile(big, options)),
                big + ": byte " + std::to_string(huge.find("{\"name")) +
                    ": an event longer than 1 MiB (--max-event-bytes to "
                    "raise)");
    }
  }
}

}  // namespace
}  // namespace strag::ingest
