// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/segments.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "graph/generic/generic_test_util.h"
#include "graph/generic/rank_edges.h"
#include "graph/generic/step_split.h"

namespace strag::graph {
namespace {

using testing::TraceBuilder;
using trace::OpType;

std::vector<uint32_t> AllRows(const trace::RankTrace& t) {
  std::vector<uint32_t> rows;
  for (uint32_t r = 0; r < t.size(); ++r) rows.push_back(r);
  return rows;
}

using Edges = std::vector<std::tuple<uint32_t, uint32_t, EdgeKind>>;

// The rank's edges at a 2 us wait tolerance, as (from, to, kind).
Edges EdgesOf(const std::vector<LocalNode>& nodes) {
  Edges got;
  for (const LocalEdge& e : BuildRankEdges(nodes, 2000)) {
    got.push_back({e.from, e.to, e.kind});
  }
  return got;
}

TEST(StepSplitTest, AssignsByLaunchElseStart) {
  TraceBuilder b(0);
  b.Step(1, 0, 100).Step(2, 100, 200).Step(1, 300, 400);  // id 1 repeats
  b.Kernel(7, 150, 10, 95)   // launched in step 1, runs in step 2: step 1
      .Kernel(7, 120, 10)    // no launch: by start, step 2
      .Kernel(7, 250, 10)    // between spans: outside
      .Kernel(7, 10, -1, 5)  // negative duration: invalid
      .Kernel(7, 20, 5, 6);
  trace::RankTrace t = b.Take();
  t.comm[4] = 3;  // no such collective: invalid
  const RankSteps s = SplitSteps(t);
  ASSERT_EQ(s.spans.size(), 2u);
  EXPECT_EQ(s.spans[0].id, 1);
  EXPECT_EQ(s.rows[0], (std::vector<uint32_t>{0}));
  EXPECT_EQ(s.rows[1], (std::vector<uint32_t>{1}));
  EXPECT_EQ(s.outside, 1);
  EXPECT_EQ(s.invalid, 2);
  EXPECT_EQ(s.duplicate_spans, 1);
}

// Two compute streams between the same comm points give two segments with
// the same position, listed by stream; seq numbers count per type.
TEST(SegmentsTest, SegmentsPerStreamAndInterval) {
  TraceBuilder b(0);
  b.Kernel(9, 12, 3, 2)  // side stream, interval 0
      .Kernel(7, 10, 5, 1)
      .Kernel(7, 16, 4, 3)  // merges with the kernel above
      .Comm(20, OpType::kAllReduce, 21, 9, 4)
      .Kernel(7, 30, 5, 5)
      .Comm(21, OpType::kBroadcast, 36, 2, 6);
  const trace::RankTrace t = b.Take();
  const std::vector<LocalNode> n = BuildLocalNodes(t, AllRows(t));
  ASSERT_EQ(n.size(), 5u);
  EXPECT_EQ(n[0].stream, 7);
  EXPECT_EQ(n[0].position, 0);
  EXPECT_EQ(n[0].start_ns, 10'000);
  EXPECT_EQ(n[0].end_ns, 20'000);
  EXPECT_EQ(n[0].launch_ns, 1'000);
  EXPECT_EQ(n[0].num_ops, 2);
  EXPECT_EQ(n[1].stream, 9);
  EXPECT_EQ(n[1].position, 0);
  EXPECT_EQ(n[1].seq, 1);
  EXPECT_EQ(n[2].type, OpType::kAllReduce);
  EXPECT_EQ(n[2].position, 1);
  EXPECT_EQ(n[2].comm, 0);
  EXPECT_EQ(n[3].position, 2);
  EXPECT_EQ(n[3].seq, 2);
  EXPECT_EQ(n[4].type, OpType::kBroadcast);
  EXPECT_EQ(n[4].position, 3);
  EXPECT_EQ(n[4].seq, 0);
}

// A comm op of another stream that starts as a segment's kernel ends cuts
// the segment there only if it was launched after that kernel: one launched
// earlier cannot have waited for it (it was queued behind something else),
// however close the times.
TEST(SegmentsTest, CutOnlyByACommLaunchedAfterTheKernel) {
  for (const double comm_launch : {3.0, 0.5}) {
    TraceBuilder b(0);
    b.Kernel(7, 10, 10, 1)  // ends at 20
        .Kernel(7, 20, 10, 2)
        .Comm(20, OpType::kAllGather, 20, 5, comm_launch);
    const trace::RankTrace t = b.Take();
    const std::vector<LocalNode> n = BuildLocalNodes(t, AllRows(t));
    size_t segments = 0;
    for (const LocalNode& node : n) segments += node.type == OpType::kCompute;
    EXPECT_EQ(segments, comm_launch > 2 ? 2u : 1u) << comm_launch;
  }
}

TEST(SegmentsTest, NonGenericCommKindIsOtherComm) {
  trace::CommOp op;
  op.kind = OpType::kForwardSend;
  EXPECT_EQ(CommKind(op), OpType::kOtherComm);
  op.kind = OpType::kCompute;
  EXPECT_EQ(CommKind(op), OpType::kOtherComm);
  op.kind = OpType::kReduceScatter;
  EXPECT_EQ(CommKind(op), OpType::kReduceScatter);
}

// Launch edges pick, per other stream, the latest segment launched before
// the comm that had ended; a segment with no evidence of waiting (no
// predecessor, no launch) gets no wait edge.
TEST(RankEdgesTest, LaunchAndWaitRules) {
  TraceBuilder b(0);
  b.Kernel(7, 0, 10)                         // 0: seg s7 [0,10]
      .Kernel(9, 0, 30)                      // 1: seg s9 [0,30]
      .Comm(20, OpType::kAllReduce, 20, 20)  // 2: AR [20,40], start 20
      .Kernel(7, 45, 5)                      // 3: seg s7 waited for AR
      .Kernel(9, 44, 1);                     // 4: seg s9 [44,45]
  const trace::RankTrace t = b.Take();
  const std::vector<LocalNode> n = BuildLocalNodes(t, AllRows(t));
  ASSERT_EQ(n.size(), 5u);
  const Edges want = {
      {0, 3, EdgeKind::kStream}, {1, 4, EdgeKind::kStream},
      {0, 2, EdgeKind::kLaunch},  // s9's segment had not ended at 20
      {2, 3, EdgeKind::kWait},    // 45 > 10 + 2 us; AR ended at 40
      {2, 4, EdgeKind::kWait},    // 44 > 30 + 2 us; AR ended at 40
  };
  EXPECT_EQ(EdgesOf(n), want);
}

// A comm whose start its launch edge explains (the segment of another
// stream that ended as it started) did not wait for the comm that merely
// ended earlier in the gap (another pipeline receive): no wait edge.
TEST(RankEdgesTest, NoWaitEdgeWhereALaunchEdgeExplainsTheStart) {
  TraceBuilder b(0);
  b.Kernel(7, 0, 50, 0.1)                  // 0: segment [0, 50]
      .Comm(26, OpType::kRecv, 10, 2, 1)   // 1: a receive [10, 12]
      .Comm(23, OpType::kRecv, 50, 3, 2);  // 2: starts as 0 ends
  const trace::RankTrace t = b.Take();
  const std::vector<LocalNode> n = BuildLocalNodes(t, AllRows(t));
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(EdgesOf(n), (Edges{{0, 2, EdgeKind::kLaunch}}));
}

}  // namespace
}  // namespace strag::graph
