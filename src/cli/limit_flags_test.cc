// SPDX-License-Identifier: Apache-2.0
#include "cli/limit_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strag::cli {
namespace {

Result<ingest::InputLimits> Parse(std::vector<std::string> args) {
  FlagSpec spec;
  AddLimitFlags(&spec);
  auto flags = Flags::Parse(args, spec);
  if (!flags.ok()) return flags.status();
  return ParseLimitFlags(*flags);
}

TEST(LimitFlagsTest, DefaultsAndSizes) {
  const auto defaults = Parse({"t.csv"});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->max_line_bytes, ingest::kDefaultMaxLineBytes);
  EXPECT_EQ(defaults->max_token_bytes, ingest::kDefaultMaxTokenBytes);
  EXPECT_EQ(defaults->max_event_bytes, ingest::kDefaultMaxEventBytes);
  const auto set =
      Parse({"t.csv", "--max-line-bytes", "256M", "--max-token-bytes=4096",
             "--max-event-bytes", "1GiB"});
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->max_line_bytes, uint64_t{256} << 20);
  EXPECT_EQ(set->max_token_bytes, 4096u);
  EXPECT_EQ(set->max_event_bytes, uint64_t{1} << 30);
  EXPECT_TRUE(Parse({"t.csv", "--max-event-bytes", "2G"}).ok());
}

TEST(LimitFlagsTest, ErrorsNameTheFlag) {
  for (const char* bad :
       {"3G", "512", "12X", "", "-5", "99999999999999999999"}) {
    const auto r = Parse({"t.csv", "--max-line-bytes", bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(),
              std::string("flag --max-line-bytes: expected a size from 1K to "
                          "2G (bytes, or with K, M, G), got \"") +
                  bad + "\"");
  }
}

}  // namespace
}  // namespace strag::cli
