// SPDX-License-Identifier: Apache-2.0
// The base module's contracts: checks that stay on in Release, Result,
// medians, pairwise means, the JSON writer, ParallelFor.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/f32.h"
#include "base/json_writer.h"
#include "base/median.h"
#include "base/parallel_for.h"
#include "base/status.h"
#include "base/str_format.h"

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

TEST(ParallelForTest, EveryTaskRunsOnce) {
  std::vector<std::atomic<int>> hits(100);
  ParallelFor(hits.size(), 4, [&](size_t k, size_t) { ++hits[k]; });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_GE(HardwareThreads(), 1u);
}

}  // namespace
}  // namespace strag
