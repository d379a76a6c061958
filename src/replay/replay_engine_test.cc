// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace strag::replay {
namespace {

using graph::DepGraph;
using graph::NodeId;

std::string Name(NodeId v) { return std::to_string(v); }

// Replays dense costs [node * lanes + lane] and keeps every time.
struct Replayed {
  StepTimes steps;
  ReplayTimes t;
};
Replayed ReplayDense(const DepGraph& g, size_t lanes,
                     const std::vector<double>& cost,
                     const std::vector<uint32_t>& sync,
                     std::vector<float> delay = {}, double root_start = 0.0) {
  const auto rows = DenseRows(cost, g.num_nodes(), lanes);
  const std::vector<double> values(g.num_nodes(), 0.0);
  const std::vector<NodeId> optimizer = {3};
  const ReplayInput in{.graph = &g,
                       .num_lanes = lanes,
                       .cost = {.rows = rows, .values = values},
                       .launch_delay = delay,
                       .sync_offsets = sync,
                       .optimizer_nodes = optimizer,
                       .root_start = root_start};
  Replayed run;
  ReplayWorkspace ws;
  run.steps = replay::Replay(in, &ws, &run.t);
  // Without keeping the times the step times are the same, and the
  // baseline kernels give the bits of the widest (AVX2 here, where the CPU
  // has it).
  const StepTimes again = replay::Replay(in, &ws);
  EXPECT_EQ(again.span, run.steps.span);
  EXPECT_EQ(again.opt, run.steps.opt);
  ReplayInput baseline = in;
  baseline.kernels = Kernels::kBaseline;
  Replayed base;
  base.steps = replay::Replay(baseline, &ws, &base.t);
  EXPECT_EQ(base.steps.span, run.steps.span);
  EXPECT_EQ(base.steps.opt, run.steps.opt);
  EXPECT_TRUE(std::ranges::equal(base.t.start.span(), run.t.start.span()));
  EXPECT_TRUE(std::ranges::equal(base.t.end.span(), run.t.end.span()));
  return run;
}

// Graph of one instance: 0 -> 1 (plain), 0 -> 2, and the group {1', 2} where
// 1' = node 3 depends on 1: node 2 must wait for node 3 to start.
//   0: plain (root)   1: plain, after 0   2: comm, after 0   3: comm, after 1
DepGraph SmallGraph(bool dp_sync) {
  DepGraph g(4);
  g.AddEdge(0, 1);
  g.AddEdge(0, 2);
  g.AddEdge(1, 3);
  EXPECT_TRUE(g.AddGroup({2, 3}, dp_sync).ok());
  EXPECT_TRUE(g.Finalize(Name).ok());
  return g;
}

// One lane: the group starts when its last member (3, at 1 + 2 = 3) starts;
// each member ends at 3 + its own transfer time.
TEST(ReplayTest, RendezvousWaitsForTheLastMember) {
  const DepGraph g = SmallGraph(false);
  const Replayed r = ReplayDense(g, 1, {1.0, 2.0, 0.5, 0.25}, {0, 1});
  EXPECT_DOUBLE_EQ(r.t.start[2], 1.0);  // launched at 1, waits until 3
  EXPECT_DOUBLE_EQ(r.t.start[3], 3.0);
  EXPECT_DOUBLE_EQ(r.t.end[2], 3.5);
  EXPECT_DOUBLE_EQ(r.t.end[3], 3.25);
  EXPECT_DOUBLE_EQ(r.steps.span[0], 3.5);
  EXPECT_DOUBLE_EQ(r.steps.opt[0], 3.25);
}

// Two lanes in one step: with dp_sync the group waits for the slower lane;
// without it each lane has its own rendezvous.
TEST(ReplayTest, DpSyncSpansTheLanesOfAStep) {
  for (bool dp_sync : {false, true}) {
    const DepGraph g = SmallGraph(dp_sync);
    // Layout [node * 2 + lane]; lane 1 has a slow node 1 (5 s instead of 2).
    const Replayed r =
        ReplayDense(g, 2, {1, 1, 2, 5, 0.5, 0.5, 0.25, 0.25}, {0, 2});
    EXPECT_DOUBLE_EQ(r.t.end[3 * 2 + 1], 6.25);  // lane 1: 1 + 5 + 0.25
    EXPECT_DOUBLE_EQ(r.t.end[3 * 2 + 0], dp_sync ? 6.25 : 3.25) << dp_sync;
  }
}

// Scalar costs (null rows) mean the same value on every lane.
TEST(ReplayTest, ScalarCosts) {
  const DepGraph g = SmallGraph(false);
  const std::vector<double> dense = {1, 1, 2, 2, 0.5, 0.5, 0.25, 0.25};
  const std::vector<double> values = {1, 2, 0.5, 0.25};
  auto rows = DenseRows(dense, 4, 2);
  rows[1] = nullptr;
  rows[3] = nullptr;
  const std::vector<uint32_t> sync = {0, 2};
  const std::vector<NodeId> optimizer = {3};
  const ReplayInput in{.graph = &g,
                       .num_lanes = 2,
                       .cost = {.rows = rows, .values = values},
                       .launch_delay = {},
                       .sync_offsets = sync,
                       .optimizer_nodes = optimizer};
  ReplayWorkspace ws;
  EXPECT_EQ(replay::Replay(in, &ws).opt,
            ReplayDense(g, 2, dense, {0, 2}).steps.opt);
}

// Many steps replay in several windows with the same result as one by one.
TEST(ReplayTest, WindowsDoNotChangeResults) {
  const DepGraph g = SmallGraph(true);
  const size_t lanes = 300;  // 100 steps of 3 DP replicas: several windows
  std::vector<double> cost(4 * lanes);
  for (size_t i = 0; i < cost.size(); ++i) cost[i] = 0.5 + double(i % 7) * 0.25;
  std::vector<uint32_t> sync;
  for (uint32_t l = 0; l <= lanes; l += 3) sync.push_back(l);
  const Replayed all = ReplayDense(g, lanes, cost, sync);
  for (size_t step = 0; step < 100; ++step) {
    std::vector<double> one(4 * 3);
    for (size_t v = 0; v < 4; ++v) {
      for (size_t d = 0; d < 3; ++d)
        one[v * 3 + d] = cost[v * lanes + step * 3 + d];
    }
    const Replayed single = ReplayDense(g, 3, one, {0, 3});
    EXPECT_EQ(all.steps.opt[step], single.steps.opt[0]) << step;
    EXPECT_EQ(all.steps.span[step], single.steps.span[0]) << step;
  }
}

// With a quorum of 2 of 3 replicas, a dp_sync group completes at the second
// earliest start: the slowest replica no longer sets the pace.
TEST(ReplayTest, QuorumIgnoresTheLastArrivals) {
  const DepGraph g = SmallGraph(true);
  // Node 1 costs 2, 5 and 9 on the three lanes: node 3 starts at 3, 6, 10.
  const std::vector<double> cost = {1,   1,   1,   2,    5,    9,
                                    0.5, 0.5, 0.5, 0.25, 0.25, 0.25};
  const auto rows = DenseRows(cost, 4, 3);
  const std::vector<double> values(4, 0.0);
  const std::vector<uint32_t> sync = {0, 3};
  const std::vector<NodeId> optimizer = {3};
  ReplayInput in{.graph = &g,
                 .num_lanes = 3,
                 .cost = {.rows = rows, .values = values},
                 .launch_delay = {},
                 .sync_offsets = sync,
                 .optimizer_nodes = optimizer};
  ReplayWorkspace ws;
  EXPECT_DOUBLE_EQ(replay::Replay(in, &ws).opt[0], 10.25);
  in.dp_quorum = 2;
  EXPECT_DOUBLE_EQ(replay::Replay(in, &ws).opt[0], 6.25);
}

// Two steps are two sync domains: a slow lane in step 1 does not delay step 0.
TEST(ReplayTest, StepsAreIndependent) {
  const DepGraph g = SmallGraph(true);
  const Replayed r =
      ReplayDense(g, 2, {1, 1, 2, 5, 0.5, 0.5, 0.25, 0.25}, {0, 1, 2});
  EXPECT_DOUBLE_EQ(r.steps.opt[0], 3.25);
  EXPECT_DOUBLE_EQ(r.steps.opt[1], 6.25);
}

// Launch delays shift an op's start after its deps; a root starts at
// root_start + its delay.
TEST(ReplayTest, LaunchDelaysAddToTheStart) {
  const DepGraph g = SmallGraph(false);
  const Replayed r = ReplayDense(g, 1, {1.0, 2.0, 0.5, 0.25}, {0, 1},
                                 {0.5f, 0.25f, 0.0f, 1.0f}, 10.0);
  EXPECT_DOUBLE_EQ(r.t.start[0], 10.5);
  EXPECT_DOUBLE_EQ(r.t.start[1], 11.75);
  EXPECT_DOUBLE_EQ(r.t.start[3], 14.75);  // 13.75 + 1
  EXPECT_DOUBLE_EQ(r.t.end[2], 15.25);
  EXPECT_DOUBLE_EQ(r.steps.opt[0], 15.0 - 10.0);
}

}  // namespace
}  // namespace strag::replay
