// SPDX-License-Identifier: Apache-2.0
// The base module's contracts: checks that stay on in Release, Result,
// medians, pairwise means, the JSON writer, ParallelFor.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/check.h"
#include "base/default_init_allocator.h"
#include "base/f32.h"
#include "base/json_writer.h"
#include "base/median.h"
#include "base/parallel_for.h"
#include "base/status.h"
#include "base/str_format.h"
#include "base/yaml_prescan.h"

namespace strag {
namespace {

// Built with -DNDEBUG in Release: the check must still fire.
TEST(CheckDeathTest, StaysOnInEveryBuild) {
  EXPECT_DEATH(STRAG_CHECK(1 + 1 == 3, "arithmetic"),
               "check failed: 1 \\+ 1 == 3: arithmetic");
  STRAG_CHECK(true, "never printed");
}

TEST(CheckDeathTest, ValueOfAFailedResultAborts) {
  Result<int> failed = InvalidInput("bad");
  EXPECT_DEATH((void)failed.value(), "value\\(\\) of a failed Result");
}

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidInput(StrFormat("%d is odd", x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  ASSIGN_OR_RETURN(const int half, Half(x));
  ASSIGN_OR_RETURN(*out, Half(half));
  return Status::Ok();
}

TEST(StatusTest, ResultsPropagateTheFirstError) {
  int q = 0;
  EXPECT_TRUE(Quarter(8, &q).ok());
  EXPECT_EQ(q, 2);
  const Status s = Quarter(6, &q);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message(), "3 is odd");
  EXPECT_EQ(s.WithContext("f.csv").message(), "f.csv: 3 is odd");
}

TEST(MedianTest, MedianAndLowerMedian) {
  std::vector<double> odd = {5, 1, 3};
  EXPECT_EQ(Median(&odd), 3);
  std::vector<double> even = {4, 1, 3, 2};
  EXPECT_EQ(Median(&even), 2.5);
  std::vector<double> lower = {4, 1, 3, 2};
  EXPECT_EQ(LowerMedian(&lower), 2);
}

TEST(F32Test, PairwiseMeanIsExactOnRepresentableSums) {
  std::vector<double> v(1000, 0.1);
  EXPECT_NEAR(PairwiseMean(v), 0.1, 1e-15);
  EXPECT_EQ(PairwiseMean(std::vector<double>{1, 2, 3, 4}), 2.5);
}

TEST(JsonWriterTest, EscapesAndNumbers) {
  JsonWriter w;
  w.BeginObject();
  w.FieldString("name", "a \"q\"\n\\");
  w.Field("x", 0.1);
  w.FieldInt("n", -3);
  w.Key("list");
  w.BeginArray();
  w.Bool(true);
  w.Null();
  w.EndArray();
  w.EndObject();
  const std::string& s = w.str();
  EXPECT_NE(s.find("\"a \\\"q\\\"\\n\\\\\""), std::string::npos) << s;
  EXPECT_NE(s.find("0.1"), std::string::npos) << s;
  EXPECT_NE(s.find("-3"), std::string::npos) << s;
  EXPECT_NE(s.find("true"), std::string::npos) << s;
  EXPECT_NE(s.find("null"), std::string::npos) << s;
}

TEST(YamlPrescanTest, BadBytesAndDeepFlow) {
  EXPECT_FALSE(FindBadYamlByte("a: 1\tb\r\n# \xC3\xA9\n"));
  const std::optional<TextProblem> ctrl = FindBadYamlByte("a: 1\nb: x\x04y\n");
  ASSERT_TRUE(ctrl);
  EXPECT_EQ(ctrl->line, 2);
  EXPECT_EQ(ctrl->column, 5);
  EXPECT_EQ(ctrl->what, "control character (byte 4)");
  EXPECT_EQ(FindBadYamlByte("\xFF\xFE" "a").value().column, 1);
  EXPECT_FALSE(FindDeepFlow("a: [[1], {b: [2]}]\n", 3));
  const std::optional<TextProblem> deep = FindDeepFlow("a:\n  [[[[1]]]]\n", 3);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->line, 2);
  EXPECT_EQ(deep->column, 6);
  EXPECT_EQ(deep->what, "nesting deeper than 3 levels");
  // Brackets inside quotes, comments and plain scalars are no nesting.
  EXPECT_FALSE(FindDeepFlow("a: \"[[[[\" # [[[[\nb: x[[[[\n", 1));
  EXPECT_TRUE(FindDeepFlow(std::string(1 << 20, '['), 64));
  // A tag or an anchor in front of a collection does not hide it.
  EXPECT_TRUE(FindDeepFlow("job: !!map {" + std::string(100, '{'), 64));
  EXPECT_TRUE(FindDeepFlow("job: &a [" + std::string(100, '['), 64));
  EXPECT_TRUE(FindDeepFlow("a: !!seq [!!seq [!!seq [[1]]]]", 3));
  EXPECT_FALSE(FindDeepFlow("a: !!str x{ y: &z b[\n", 1));
}

TEST(StrFormatTest, ShortAndLongTexts) {
  EXPECT_EQ(StrFormat("%d %.2f %s", 7, 0.125, "ms"), "7 0.12 ms");
  EXPECT_EQ(StrFormat("%s", ""), "");
  for (size_t n : {254u, 255u, 256u, 257u, 5000u}) {
    const std::string long_text(n, 'x');
    EXPECT_EQ(StrFormat("%s", long_text.c_str()), long_text) << n;
  }
}

// Strings are written as valid UTF-8 whatever the bytes: well-formed
// sequences pass, each maximal ill-formed subpart becomes one U+FFFD.
TEST(JsonWriterTest, StringsAreValidUtf8) {
  const auto written = [](std::string_view bytes) {
    JsonWriter w(0);
    w.String(bytes);
    return w.str();
  };
  const std::string fffd = "\xEF\xBF\xBD";
  // Two, three and four bytes, at the limits of each form.
  for (std::string_view good :
       {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEF\xBF\xBF",
        "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "aten::mm \xCE\xBB"}) {
    EXPECT_EQ(written(good), "\"" + std::string(good) + "\"");
  }
  // A lone continuation byte, overlong forms, surrogates, past U+10FFFF,
  // bytes that never occur, and a sequence cut short (its lead and the
  // trailing bytes that fit make one subpart).
  EXPECT_EQ(written("a\x80z"), "\"a" + fffd + "z\"");
  EXPECT_EQ(written("\xC0\xAF"), "\"" + fffd + fffd + "\"");
  EXPECT_EQ(written("\xE0\x80\xAF"), "\"" + fffd + fffd + fffd + "\"");
  EXPECT_EQ(written("\xED\xA0\x80"), "\"" + fffd + fffd + fffd + "\"");
  EXPECT_EQ(written("\xF4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");
  EXPECT_EQ(written("\xFE\xFF"), "\"" + fffd + fffd + "\"");
  EXPECT_EQ(written("\xE2\x82x"), "\"" + fffd + "x\"");
  EXPECT_EQ(written("\xF0\x9F\x98"), "\"" + fffd + "\"");
  // Valid JSON that is also a valid JavaScript string literal.
  EXPECT_EQ(written("\xE2\x80\xA8|\xE2\x80\xA9"), "\"\\u2028|\\u2029\"");
}

// A vector on DefaultInitAllocator: rows made from a value are as with
// std::allocator (only `resize(n)`'s new rows are left unset, which no test
// may read); rows written after `resize(n)` read back; strings still work.
TEST(DefaultInitAllocatorTest, ValuesAsWithStdAllocator) {
  std::vector<int64_t, DefaultInitAllocator<int64_t>> v = {1, 2, 3};
  v.resize(6);
  for (size_t i = 3; i < v.size(); ++i) v[i] = static_cast<int64_t>(i * i);
  v.insert(v.end(), {7, 8});
  v.resize(10, -1);
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.end()),
            (std::vector<int64_t>{1, 2, 3, 9, 16, 25, 7, 8, -1, -1}));
  v.assign(3, 5);
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.end()),
            (std::vector<int64_t>{5, 5, 5}));
  std::vector<std::string, DefaultInitAllocator<std::string>> s(2);
  EXPECT_EQ(s[0], "");  // class types are default-constructed as always
  s.push_back("x");
  EXPECT_EQ(s.back(), "x");
}

TEST(ParallelForTest, EveryTaskRunsOnce) {
  std::vector<std::atomic<int>> hits(100);
  ParallelFor(hits.size(), 4, [&](size_t k, size_t) { ++hits[k]; });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_GE(HardwareThreads(), 1u);
}

// The parked helper threads, called again and again with more and fewer
// workers, from inside a task (nested: the helpers are busy) and from two
// threads at once: every task once, every worker index in range, and an
// exception thrown by a task reaches the caller.
TEST(ParallelForTest, CallsAgainNestedAndFromTwoThreads) {
  const auto check = [](size_t tasks, size_t workers) {
    std::vector<std::atomic<int>> hits(tasks);
    std::atomic<bool> bad_worker{false};
    ParallelFor(tasks, workers, [&](size_t k, size_t w) {
      if (w >= workers) bad_worker = true;
      ++hits[k];
    });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
    EXPECT_FALSE(bad_worker.load());
  };
  for (int round = 0; round < 50; ++round) {
    for (size_t workers : {2, 5, 3, 1, 7}) check(40, workers);
  }
  std::atomic<int> inner{0};
  ParallelFor(6, 3, [&](size_t, size_t) {
    ParallelFor(10, 2, [&](size_t, size_t) { ++inner; });
  });
  EXPECT_EQ(inner.load(), 60);
  std::thread other([&] {
    for (int round = 0; round < 50; ++round) check(30, 3);
  });
  for (int round = 0; round < 50; ++round) check(30, 2);
  other.join();
  EXPECT_THROW(ParallelFor(20, 3,
                           [](size_t k, size_t) {
                             if (k == 7) throw std::bad_alloc();
                           }),
               std::bad_alloc);
  check(20, 3);  // the helpers are free again
}

}  // namespace
}  // namespace strag
