// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/segment_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "graph/generic/generic_test_util.h"

namespace strag::graph {
namespace {

using testing::TraceBuilder;
using trace::OpType;

// Rows: 0 add on stream 9; 1, 2 mm on stream 7; 3 all-reduce; 4 add on
// stream 7; 5 broadcast. Nodes: compute #0 (rows 1, 2), compute #1 (row
// 0), the all-reduce, compute #2 (row 4), the broadcast.
trace::RankTrace TwoNames(int32_t rank, std::vector<std::string> names) {
  TraceBuilder b(rank);
  b.Kernel(9, 12, 3, 2)
      .Kernel(7, 10, 5, 1)
      .Kernel(7, 16, 4, 3)
      .Comm(20, OpType::kAllReduce, 21, 9, 4)
      .Kernel(7, 30, 5, 5)
      .Comm(21, OpType::kBroadcast, 36, 2, 6);
  trace::RankTrace t = b.Take();
  t.names = std::move(names);
  const bool mm_first = t.names[0] == "mm";
  const uint32_t mm = mm_first ? 0 : 1, add = mm_first ? 1 : 0;
  t.name = {add, mm, mm, 0, add, 0};
  return t;
}

std::vector<uint32_t> AllRows(const trace::RankTrace& t) {
  std::vector<uint32_t> rows;
  for (uint32_t r = 0; r < t.size(); ++r) rows.push_back(r);
  return rows;
}

TEST(SegmentOpsTest, NodeOfRowAndTotalsPerSegment) {
  const trace::RankTrace t = TwoNames(0, {"mm", "add"});
  std::vector<uint32_t> node_of_row;
  const std::vector<LocalNode> n = BuildLocalNodes(t, AllRows(t), &node_of_row);
  EXPECT_EQ(node_of_row, (std::vector<uint32_t>{1, 0, 0, 2, 3, 4}));
  const LocalSegmentOps ops = SumSegmentOps(t, AllRows(t), n, node_of_row);
  EXPECT_EQ(ops.offsets, (std::vector<uint32_t>{0, 1, 2, 3}));
  ASSERT_EQ(ops.totals.size(), 3u);
  EXPECT_EQ(ops.totals[0].name, 0u);  // mm: 5 + 4 us
  EXPECT_EQ(ops.totals[0].count, 2);
  EXPECT_EQ(ops.totals[0].total_ns, 9'000);
  EXPECT_EQ(ops.totals[1].name, 1u);  // add on stream 9
  EXPECT_EQ(ops.totals[1].total_ns, 3'000);
  EXPECT_EQ(ops.totals[2].total_ns, 5'000);
}

TEST(SegmentOpsTest, NamesInternedAcrossRanks) {
  const trace::RankTrace a = TwoNames(0, {"mm", "add"});
  const trace::RankTrace b = TwoNames(1, {"add", "mm"});
  SegmentOpsBuilder builder;
  builder.AddRank(a, 3);
  builder.AddRank(b, 3);
  for (int64_t step : {4, 5}) {
    for (const trace::RankTrace* t : {&a, &b}) {
      std::vector<uint32_t> node_of_row;
      const auto n = BuildLocalNodes(*t, AllRows(*t), &node_of_row);
      builder.Add(static_cast<size_t>(t->rank), step,
                  SumSegmentOps(*t, AllRows(*t), n, node_of_row));
    }
  }
  const SegmentOps ops = builder.Take();
  EXPECT_EQ(ops.names, (std::vector<std::string>{"mm", "add"}));
  EXPECT_EQ(ops.steps, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(ops.StepIndex(5), 1);
  EXPECT_EQ(ops.StepIndex(6), -1);
  EXPECT_EQ(ops.RankIndex(1), 1);
  ASSERT_EQ(ops.Of(1, 0, 1).size(), 1u);
  EXPECT_EQ(ops.Of(1, 0, 1)[0].name, 0u);  // "mm" on rank 1 too
  EXPECT_EQ(ops.Of(1, 0, 1)[0].total_ns, 9'000);
  EXPECT_EQ(ops.Of(0, 2, 0)[0].name, 1u);
  EXPECT_TRUE(ops.Of(0, 3, 0).empty());  // no compute #3
  EXPECT_TRUE(ops.Of(2, 0, 0).empty());  // no rank index 2
}

TEST(SegmentOpsTest, TotalsPerLaunchingCpuOp) {
  trace::RankTrace t = TwoNames(0, {"mm", "add"});
  t.names.push_back("aten::linear");
  constexpr uint32_t kNo = trace::RankTrace::kNoLaunchOp;
  t.launch_op = {kNo, 2, kNo, kNo, 2, kNo};  // rows 1 and 4 in aten::linear
  std::vector<uint32_t> node_of_row;
  const std::vector<LocalNode> n = BuildLocalNodes(t, AllRows(t), &node_of_row);
  const LocalSegmentOps local = SumSegmentOps(t, AllRows(t), n, node_of_row);
  EXPECT_EQ(local.offsets, (std::vector<uint32_t>{0, 2, 3, 4}));
  ASSERT_EQ(local.totals.size(), 4u);
  EXPECT_EQ(local.totals[0].op, 2u);  // mm in aten::linear: 5 us
  EXPECT_EQ(local.totals[0].total_ns, 5'000);
  EXPECT_EQ(local.totals[1].op, kNoLaunchOp);  // mm outside any: 4 us
  EXPECT_EQ(local.totals[1].total_ns, 4'000);
  EXPECT_EQ(local.totals[2].op, kNoLaunchOp);
  EXPECT_EQ(local.totals[3].op, 2u);

  SegmentOpsBuilder builder;
  builder.AddRank(t, 3);
  builder.Add(0, 1, local);
  const SegmentOps ops = builder.Take();
  const auto linear = static_cast<uint32_t>(
      std::find(ops.names.begin(), ops.names.end(), "aten::linear") -
      ops.names.begin());
  ASSERT_LT(linear, ops.names.size());
  ASSERT_EQ(ops.Of(0, 0, 0).size(), 2u);
  EXPECT_EQ(ops.names[ops.Of(0, 0, 0)[0].name], "mm");
  EXPECT_EQ(ops.Of(0, 0, 0)[0].op, linear);
  EXPECT_EQ(ops.Of(0, 0, 0)[1].op, kNoLaunchOp);
  EXPECT_EQ(ops.Of(0, 2, 0)[0].op, linear);
}

}  // namespace
}  // namespace strag::graph
