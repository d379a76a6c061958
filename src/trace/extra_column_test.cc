// SPDX-License-Identifier: Apache-2.0
#include "trace/extra_column.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strag::trace {
namespace {

TEST(ExtraColumnTest, ValuesBackToBack) {
  ExtraColumn c("seq_lens", {"2048;2048", "", "a,\"b\"", "\n"});
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], "2048;2048");
  EXPECT_EQ(c[1], "");
  EXPECT_EQ(c[3], "\n");
  EXPECT_EQ(c.text(), "2048;2048a,\"b\"\n");
  EXPECT_EQ(c.ends(), (Column<uint64_t>{9, 9, 14, 15}));
  c.push_back("x");
  EXPECT_EQ(c.Values(),
            (std::vector<std::string>{"2048;2048", "", "a,\"b\"", "\n", "x"}));
}

TEST(ExtraColumnTest, AppendTruncateClear) {
  const ExtraColumn from("c", {"a", "bb", "", "dddd", "e"});
  for (size_t first = 0; first <= from.size(); ++first) {
    for (size_t last = first; last <= from.size(); ++last) {
      ExtraColumn to("c", {"zz"});
      to.Append(from, first, last);
      std::vector<std::string> expected = {"zz"};
      for (size_t r = first; r < last; ++r) expected.emplace_back(from[r]);
      EXPECT_EQ(to.Values(), expected) << first << ".." << last;
      for (size_t keep = 0; keep <= to.size() + 1; ++keep) {
        ExtraColumn cut = to;
        cut.Truncate(keep);
        const size_t kept = std::min(keep, expected.size());
        EXPECT_EQ(cut.Values(),
                  std::vector<std::string>(
                      expected.begin(),
                      expected.begin() + static_cast<ptrdiff_t>(kept)));
        cut.push_back("y");  // the text was cut where the values end
        EXPECT_EQ(cut[kept], "y");
      }
    }
  }
  ExtraColumn c = from;
  c.clear();
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.name, "c");
  EXPECT_TRUE(c.text().empty());
}

TEST(ExtraColumnTest, FromPartsChecksTheEnds) {
  const Result<ExtraColumn> good =
      ExtraColumn::FromParts("c", "abc", Column<uint64_t>{1, 1, 3});
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, ExtraColumn("c", {"a", "", "bc"}));
  EXPECT_FALSE(
      ExtraColumn::FromParts("c", "abc", Column<uint64_t>{2, 1, 3}).ok());
  EXPECT_FALSE(ExtraColumn::FromParts("c", "abc", Column<uint64_t>{1, 4}).ok());
  EXPECT_FALSE(ExtraColumn::FromParts("c", "abc", Column<uint64_t>{1, 2}).ok());
  EXPECT_TRUE(ExtraColumn::FromParts("c", "", Column<uint64_t>{}).ok());
  EXPECT_FALSE(ExtraColumn::FromParts("c", "a", Column<uint64_t>{}).ok());
  EXPECT_NE(ExtraColumn("c", {"a"}), ExtraColumn("d", {"a"}));
  EXPECT_NE(ExtraColumn("c", {"a", "b"}), ExtraColumn("c", {"ab"}));
}

}  // namespace
}  // namespace strag::trace
