// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/trace_splitter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace strag::ingest::kineto {
namespace {

// What a splitter handed over: each element's offset and text, each value
// as "key=text@offset", and the final status.
struct Split {
  std::vector<std::pair<uint64_t, std::string>> elements;
  std::vector<std::string> values;
  std::string error;  // empty: ok

  bool operator==(const Split&) const = default;
};

Split SplitInPieces(std::string_view text, const std::vector<size_t>& cuts,
                    size_t batch_bytes = 1 << 20) {
  Split split;
  TraceSplitter splitter(
      "t.json", batch_bytes, {"distributedInfo", "displayTimeUnit"},
      [&](const EventBatch& batch) {
        // The promised room around the batch: writable, and put back.
        const char before = batch.data[-1];
        const char after = batch.data[batch.size];
        batch.data[-1] = '[';
        batch.data[batch.size] = ']';
        batch.data[-1] = before;
        batch.data[batch.size] = after;
        // A batch said to have no escapes has no backslash.
        if (!batch.may_have_escapes) {
          EXPECT_EQ(batch.text().find('\\'), std::string_view::npos)
              << batch.text();
        }
        for (const ElementSpan& e : *batch.elements) {
          split.elements.emplace_back(
              batch.offset + e.begin,
              std::string(batch.text().substr(e.begin, e.end - e.begin)));
        }
        return Status::Ok();
      },
      [&](std::string_view key, std::string_view value, uint64_t offset) {
        split.values.push_back(std::string(key) + "=" + std::string(value) +
                               "@" + std::to_string(offset));
        return Status::Ok();
      });
  size_t at = 0;
  Status status;
  for (size_t cut : cuts) {
    if (status.ok()) status = splitter.Feed(text.substr(at, cut - at));
    at = cut;
  }
  if (status.ok()) status = splitter.Feed(text.substr(at));
  if (status.ok()) status = splitter.Finish();
  if (!status.ok()) split.error = status.message();
  return split;
}

Split SplitWhole(std::string_view text) { return SplitInPieces(text, {}); }

// Strings that hold everything that could fool a splitter.
const char* const kTricky =
    R"({"schemaVersion": 1, "deviceProperties": [{"name": "a ] } [ {"}],
  "distributedInfo": {"rank": 2, "world_size": 4, "x": "}]\"{["},
  "traceEvents": [
  {"ph": "X", "name": "br{ace}s [and] brackets", "ts": 1, "dur": 2},
  {"ph": "X", "name": "quote \" inside", "args": {"a": [1, [2, {"b": "\\"}]]}},
  {"ph": "i", "name": "backslashes \\\\\" still inside \\\\", "s": "g"},
  "a string element", 42, [1, 2],
  {"name": "\u00e9\t\\n}"}
  ],
  "displayTimeUnit": "ns", "traceName": "x]}"
})";

TEST(TraceSplitterTest, FindsEveryElementOfTraceEvents) {
  const Split split = SplitWhole(kTricky);
  ASSERT_EQ(split.error, "");
  ASSERT_EQ(split.elements.size(), 7u);
  EXPECT_EQ(
      split.elements[0].second,
      R"({"ph": "X", "name": "br{ace}s [and] brackets", "ts": 1, "dur": 2})");
  EXPECT_EQ(split.elements[3].second, R"("a string element")");
  EXPECT_EQ(split.elements[4].second, "42");
  EXPECT_EQ(split.elements[5].second, "[1, 2]");
  EXPECT_EQ(split.elements[6].second, R"({"name": "\u00e9\t\\n}"})");
  for (const auto& [offset, text] : split.elements) {
    EXPECT_EQ(std::string_view(kTricky).substr(offset, text.size()), text);
  }
  ASSERT_EQ(split.values.size(), 2u);
  EXPECT_EQ(split.values[0].substr(0, split.values[0].find('@')),
            R"(distributedInfo={"rank": 2, "world_size": 4, "x": "}]\"{["})");
  EXPECT_EQ(split.values[1].substr(0, split.values[1].find('@')),
            R"(displayTimeUnit="ns")");
}

TEST(TraceSplitterTest, BareListAsTorch113WritesIt) {
  const Split split = SplitWhole(
      R"([{"name": "aten::zeros", "ph": "X", "ts": 288, "dur": 79, "tid": 1, "pid": "CPU functions", "args": {}}, {"name": "b"}]
)");
  ASSERT_EQ(split.error, "");
  ASSERT_EQ(split.elements.size(), 2u);
  EXPECT_EQ(split.elements[1].second, R"({"name": "b"})");
  EXPECT_TRUE(split.values.empty());
}

TEST(TraceSplitterTest, EmptyTraceEventsAndKeysAfterIt) {
  const Split split =
      SplitWhole(R"({"traceEvents": [ ], "distributedInfo": {"rank": 1}})");
  EXPECT_EQ(split.error, "");
  EXPECT_TRUE(split.elements.empty());
  ASSERT_EQ(split.values.size(), 1u);
  EXPECT_EQ(split.values[0], R"(distributedInfo={"rank": 1}@40)");
}

// Every cut of the text, and random cuts into many pieces, give what the
// whole text gives: elements, values and errors alike.
TEST(TraceSplitterTest, PiecesCutAnywhereGiveTheSameResult) {
  // A backslash run across a 64-byte block boundary, at every alignment.
  std::vector<std::string> texts = {kTricky};
  for (int pad = 0; pad < 70; ++pad) {
    texts.push_back(R"({"traceEvents": [{"name": ")" + std::string(pad, 'x') +
                    R"(\\\"\\", "ts": 1}, {"a": "]"}]})");
  }
  texts.push_back(std::string(kTricky).substr(0, 300));        // truncated
  texts.push_back(R"({"traceEvents": [{"a": 1} {"b": 2}]})");  // no comma
  std::mt19937 random(7);
  for (const std::string& text : texts) {
    const Split whole = SplitWhole(text);
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      ASSERT_EQ(SplitInPieces(text, {cut}), whole) << text << " cut " << cut;
    }
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<size_t> cuts;
      for (size_t at = 0; at < text.size(); at += random() % 9) {
        cuts.push_back(at);
      }
      ASSERT_EQ(SplitInPieces(text, cuts), whole) << text;
      ASSERT_EQ(SplitInPieces(text, cuts, /*batch_bytes=*/1), whole) << text;
    }
  }
}

// Every block kernel the CPU runs classifies as the portable one does,
// whatever the string state it starts in (quotes, backslash runs and
// brackets at every position, across block boundaries).
TEST(TraceSplitterTest, BlockKernelsAgree) {
  std::mt19937 random(11);
  const char kAlphabet[] = "\"\\{}[]a ";
  for (int trial = 0; trial < 2000; ++trial) {
    const size_t blocks = 1 + random() % 5;
    std::string text(blocks * kJsonBlockBytes, ' ');
    for (char& c : text) c = kAlphabet[random() % (sizeof(kAlphabet) - 1)];
    const JsonStringState start{(trial & 1) != 0, (trial & 2) != 0};
    JsonStringState portable_state = start;
    std::vector<BlockStructure> portable(blocks);
    ClassifyBlocksPortable(text.data(), blocks, &portable_state,
                           portable.data());
    for (const BlockKernel kernel :
         {BlockKernel::kAvx2, BlockKernel::kAvx512}) {
      if (!CpuRuns(kernel)) continue;
      JsonStringState state = start;
      std::vector<BlockStructure> out(blocks);
      ClassifyBlocks(kernel, text.data(), blocks, &state, out.data());
      for (size_t b = 0; b < blocks; ++b) {
        EXPECT_EQ(out[b].opens, portable[b].opens) << text;
        EXPECT_EQ(out[b].closes, portable[b].closes) << text;
        EXPECT_EQ(out[b].open_count, portable[b].open_count);
        EXPECT_EQ(out[b].close_count, portable[b].close_count);
      }
      EXPECT_EQ(state.in_string, portable_state.in_string);
      EXPECT_EQ(state.escape_next, portable_state.escape_next);
    }
  }
}

std::string ErrorOf(std::string_view text) { return SplitWhole(text).error; }

TEST(TraceSplitterTest, ErrorsNameTheByte) {
  EXPECT_EQ(ErrorOf(""), "t.json: not JSON: the text is empty");
  EXPECT_EQ(ErrorOf("  PK\x03\x04"),
            "t.json: byte 2: not JSON: expected '{' or '[' but found 'P'");
  EXPECT_EQ(ErrorOf("{\"a\": 1}"),
            "t.json: no traceEvents: not a Chrome / Kineto trace");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": {}}"),
            "t.json: byte 16: traceEvents is not an array");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{\"a\": 1"),
            "t.json: truncated JSON: the text ends at byte 24 inside "
            "traceEvents");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{\"a\": \"1"),
            "t.json: truncated JSON: the text ends at byte 25 inside "
            "traceEvents inside a string");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": []"),
            "t.json: truncated JSON: the text ends at byte 18");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{}, ]}"),
            "t.json: byte 21: expected an event after ','");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [, {}]}"),
            "t.json: byte 17: expected an event before ','");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{} {}]}"),
            "t.json: byte 20: expected ',' between events");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [{}}"),
            "t.json: byte 19: expected ']' at the end of traceEvents");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": []} x"),
            "t.json: byte 20: unexpected data after the end of the JSON");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [], \"a\" 1}"),
            "t.json: byte 24: expected ':' after key \"a\"");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [], \"a\": [1}}"),
            "t.json: byte 27: mismatched '}' in the value of \"a\"");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [], \"a\": bogus}"),
            "t.json: byte 25: expected a value for key \"a\" but found 'b'");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [], \"a\": nulll}"),
            "t.json: byte 25: not a JSON value for key \"a\": nulll");
  EXPECT_EQ(ErrorOf("{\"traceEvents\": [],}"),
            "t.json: byte 19: expected a key but found '}'");
}

// Every prefix of a trace is an error, never a crash or a success.
TEST(TraceSplitterTest, EveryPrefixIsTruncated) {
  const std::string text = kTricky;
  for (size_t size = 0; size + 1 < text.size(); ++size) {
    const Split split = SplitWhole(text.substr(0, size));
    EXPECT_NE(split.error, "") << size;
  }
}

// Events before an error are handed over first, so the first error in the
// text wins even when the splitter finds a later one first.
TEST(TraceSplitterTest, EventsBeforeAnErrorAreHandedOver) {
  const Split split = SplitWhole(R"({"traceEvents": [{"a": 1}, {"b": 2} x]})");
  EXPECT_EQ(split.elements.size(), 2u);
  EXPECT_EQ(split.error, "t.json: byte 36: expected ',' between events");
}

}  // namespace
}  // namespace strag::ingest::kineto
