// SPDX-License-Identifier: Apache-2.0
#include "cli/suggest.h"

#include <gtest/gtest.h>

#include "cli/flags.h"

namespace strag::cli {
namespace {

TEST(SuggestTest, EditDistance) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("json", "json"), 0u);
  EXPECT_EQ(EditDistance("jsn", "json"), 1u);   // a deletion
  EXPECT_EQ(EditDistance("jsno", "json"), 1u);  // a transposition
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
}

TEST(SuggestTest, ClosestIsATypoOrNothing) {
  const std::vector<std::string> flags = {"json", "html", "perfetto",
                                          "perfetto-steps", "top"};
  EXPECT_EQ(Closest("jsn", flags), "json");
  EXPECT_EQ(Closest("hmtl", flags), "html");
  EXPECT_EQ(Closest("perfeto", flags), "perfetto");
  EXPECT_EQ(Closest("perf", flags), "perfetto");  // a prefix
  EXPECT_EQ(Closest("xyz", flags), std::nullopt);
  EXPECT_EQ(Closest("timeline", flags), std::nullopt);
}

TEST(SuggestTest, UnknownFlagSuggestsTheClosest) {
  const FlagSpec spec{.with_value = {"json", "html"}, .booleans = {"quiet"}};
  EXPECT_EQ(Flags::Parse({"--jsn", "x"}, spec).status().message(),
            "unknown flag --jsn (did you mean --json?)");
  EXPECT_EQ(Flags::Parse({"--quite"}, spec).status().message(),
            "unknown flag --quite (did you mean --quiet?)");
  EXPECT_EQ(Flags::Parse({"--frobnicate"}, spec).status().message(),
            "unknown flag --frobnicate");
}

}  // namespace
}  // namespace strag::cli
