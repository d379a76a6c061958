// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/collective_matching.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "graph/generic/generic_test_util.h"
#include "graph/generic/group_catalog.h"

namespace strag::graph {
namespace {

using testing::TraceBuilder;
using trace::OpType;
using Members = std::vector<std::pair<int32_t, uint32_t>>;

// Traces, their nodes (all rows = one step), catalog and matching.
struct Job {
  std::vector<trace::RankTrace> traces;
  std::vector<const trace::RankTrace*> ptrs;
  std::vector<int32_t> ranks;
  std::vector<std::vector<LocalNode>> nodes;
  GroupCatalog catalog;
  std::vector<MatchedComm> matched;
  int64_t duplicates = 0;

  explicit Job(std::vector<trace::RankTrace> t) : traces(std::move(t)) {
    for (const auto& tr : traces) {
      ptrs.push_back(&tr);
      ranks.push_back(tr.rank);
      std::vector<uint32_t> rows;
      for (uint32_t r = 0; r < tr.size(); ++r) rows.push_back(r);
      nodes.push_back(BuildLocalNodes(tr, rows));
    }
    catalog = BuildGroupCatalog(ptrs, ranks);
    matched = MatchStep(catalog, ptrs, ranks, nodes, &duplicates);
  }
};

TEST(GroupCatalogTest, MergesGroupsAcrossRanks) {
  TraceBuilder a(0), b(1), c(2);
  a.Group("1", {0, 1, 5});  // rank 5 has no trace
  b.Group("1", {});         // same group, list not known here
  a.Group("x", {0, 2});     // "x" means different rank sets on 0 and 1
  b.Group("x", {1, 2});
  c.Group("tp", {});  // named, never listed: members = ranks using it
  c.Comm(20, OpType::kAllReduce, 0, 1, -1, 0, 3);
  b.Comm(20, OpType::kAllReduce, 0, 1, -1, -1, -1);  // unknown group
  std::vector<trace::RankTrace> t = {a.Take(), b.Take(), c.Take()};
  Job job(std::move(t));
  const GroupCatalog& cat = job.catalog;
  ASSERT_EQ(cat.groups.size(), 5u);  // default, "1", "x" twice, "tp"
  const auto& one = cat.groups[static_cast<size_t>(cat.Of(0, 0))];
  EXPECT_EQ(cat.Of(1, 0), cat.Of(0, 0));
  EXPECT_EQ(one.members, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(one.absent, (std::vector<int32_t>{5}));
  EXPECT_EQ(one.label, "group '1' of ranks 0-1,5");
  EXPECT_NE(cat.Of(0, 1), cat.Of(1, 1));
  const auto& tp = cat.groups[static_cast<size_t>(cat.Of(2, 0))];
  EXPECT_EQ(tp.members, (std::vector<int32_t>{2}));
  EXPECT_TRUE(tp.use_seq);
  const auto& def = cat.groups[static_cast<size_t>(cat.Of(1, -1))];
  EXPECT_EQ(def.members, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FALSE(def.use_seq);               // its all-reduce has no seq
  EXPECT_EQ(cat.Of(1, 7), cat.Of(1, -1));  // out of range: default
}

// With seq numbers the identity is (group, seq), whatever the order of
// issue; a second op with the same seq on a rank stays on its own.
TEST(CollectiveMatchingTest, BySeqAndDuplicates) {
  TraceBuilder a(0), b(1);
  const int32_t ga = a.Group("0", {0, 1}), gb = b.Group("0", {0, 1});
  a.Comm(20, OpType::kAllReduce, 0, 1, 1, ga, 5)
      .Comm(20, OpType::kAllReduce, 2, 1, 2, ga, 6);
  b.Comm(20, OpType::kAllReduce, 0, 1, 1, gb, 6)  // issued in other order
      .Comm(20, OpType::kAllReduce, 2, 1, 2, gb, 5)
      .Comm(20, OpType::kAllReduce, 4, 1, 3, gb, 5);  // seq 5 again
  Job job({a.Take(), b.Take()});
  ASSERT_EQ(job.matched.size(), 3u);
  EXPECT_EQ(job.matched[0].members, (Members{{0, 0}, {1, 1}}));
  EXPECT_EQ(job.matched[0].what, "all-reduce seq 5 of group '0' of ranks 0-1");
  EXPECT_EQ(job.matched[1].members, (Members{{0, 1}, {1, 0}}));
  EXPECT_EQ(job.matched[2].members, (Members{{1, 2}}));
  EXPECT_TRUE(job.matched[2].missing.empty());
  EXPECT_EQ(job.duplicates, 1);
}

// Without seq numbers: the k-th op of (group, kind); a member that never
// joins is named.
TEST(CollectiveMatchingTest, ByOrderWithMissingMember) {
  std::vector<trace::RankTrace> t;
  for (int32_t r = 0; r < 3; ++r) {
    TraceBuilder b(r);
    const int32_t g = b.Group("0", {0, 1, 2});
    b.Comm(20, OpType::kAllGather, 0, 1, 1, g)
        .Comm(20, OpType::kAllReduce, 2, 1, 2, g);
    if (r != 2) b.Comm(20, OpType::kAllReduce, 4, 1, 3, g);
    t.push_back(b.Take());
  }
  Job job(std::move(t));
  ASSERT_EQ(job.matched.size(), 3u);
  EXPECT_EQ(job.matched[0].kind, OpType::kAllGather);
  EXPECT_EQ(job.matched[0].members.size(), 3u);
  EXPECT_EQ(job.matched[2].what, "all-reduce #1 of group '0' of ranks 0-2");
  EXPECT_EQ(job.matched[2].members, (Members{{0, 2}, {1, 2}}));
  EXPECT_EQ(job.matched[2].missing, (std::vector<int32_t>{2}));
}

// Sends pair with recvs in order per (sender, receiver); a peer is inferred
// from a two-rank group; lone ends name the missing or absent peer.
TEST(CollectiveMatchingTest, SendRecvPairs) {
  TraceBuilder a(0), b(1);
  const int32_t pair = b.Group("p", {0, 1});
  a.Comm(30, OpType::kSend, 0, 1, 1, -1, -1, 1)
      .Comm(30, OpType::kSend, 2, 1, 2, -1, -1, 1)
      .Comm(30, OpType::kSend, 4, 1, 3, -1, -1, 7);   // rank 7: no trace
  b.Comm(30, OpType::kRecv, 0, 1, 1, pair)            // peer from the group
      .Comm(30, OpType::kRecv, 2, 1, 2, -1, -1, -1);  // peer unknown
  Job job({a.Take(), b.Take()});
  ASSERT_EQ(job.matched.size(), 4u);
  EXPECT_EQ(job.matched[0].members, (Members{{0, 0}, {1, 0}}));
  EXPECT_EQ(job.matched[0].what, "send #0 from rank 0 to rank 1");
  EXPECT_EQ(job.matched[1].members, (Members{{0, 1}}));
  EXPECT_EQ(job.matched[1].missing, (std::vector<int32_t>{1}));
  EXPECT_EQ(job.matched[2].members, (Members{{0, 2}}));
  EXPECT_EQ(job.matched[2].absent, (std::vector<int32_t>{7}));
  EXPECT_EQ(job.matched[3].members, (Members{{1, 1}}));
  EXPECT_EQ(job.matched[3].what, "recv #1 on rank 1 (peer unknown)");
}

TEST(GroupCatalogTest, FormatRanks) {
  EXPECT_EQ(FormatRanks(std::vector<int32_t>{}), "");
  EXPECT_EQ(FormatRanks(std::vector<int32_t>{3}), "3");
  EXPECT_EQ(FormatRanks(std::vector<int32_t>{0, 1, 2, 3, 8, 10, 11}),
            "0-3,8,10-11");
}

}  // namespace
}  // namespace strag::graph
