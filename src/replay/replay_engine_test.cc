// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_engine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strag::replay {
namespace {

using graph::DepGraph;
using graph::NodeId;

std::string Name(NodeId v) { return std::to_string(v); }

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
  const std::vector<double> cost = {1.0, 2.0, 0.5, 0.25};
  const std::vector<uint32_t> sync = {0, 1};
  const ReplayInput in{.graph = &g, .num_lanes = 1, .cost = cost,
                       .launch_delay = {}, .sync_offsets = sync};
  ReplayTimes t;
  Replay(in, &t);
  EXPECT_DOUBLE_EQ(t.start[2], 1.0);  // launched at 1, waits until 3
  EXPECT_DOUBLE_EQ(t.start[3], 3.0);
  EXPECT_DOUBLE_EQ(t.end[2], 3.5);
  EXPECT_DOUBLE_EQ(t.end[3], 3.25);
  const StepTimes s = ComputeStepTimes(in, t, std::vector<NodeId>{3});
  EXPECT_DOUBLE_EQ(s.span[0], 3.5);
  EXPECT_DOUBLE_EQ(s.opt[0], 3.25);
}

// Two lanes in one step: with dp_sync the group waits for the slower lane;
// without it each lane has its own rendezvous.
TEST(ReplayTest, DpSyncSpansTheLanesOfAStep) {
  for (bool dp_sync : {false, true}) {
    const DepGraph g = SmallGraph(dp_sync);
    // Layout [node * 2 + lane]; lane 1 has a slow node 1 (5 s instead of 2).
    const std::vector<double> cost = {1, 1, 2, 5, 0.5, 0.5, 0.25, 0.25};
    const std::vector<uint32_t> sync = {0, 2};
    const ReplayInput in{.graph = &g, .num_lanes = 2, .cost = cost,
                         .launch_delay = {}, .sync_offsets = sync};
    ReplayTimes t;
    Replay(in, &t);
    EXPECT_DOUBLE_EQ(t.end[3 * 2 + 1], 6.25);  // lane 1: 1 + 5 + 0.25
    EXPECT_DOUBLE_EQ(t.end[3 * 2 + 0], dp_sync ? 6.25 : 3.25) << dp_sync;
  }
}

// Two steps are two sync domains: a slow lane in step 1 does not delay step 0.
TEST(ReplayTest, StepsAreIndependent) {
  const DepGraph g = SmallGraph(true);
  const std::vector<double> cost = {1, 1, 2, 5, 0.5, 0.5, 0.25, 0.25};
  const std::vector<uint32_t> sync = {0, 1, 2};
  const ReplayInput in{.graph = &g, .num_lanes = 2, .cost = cost,
                       .launch_delay = {}, .sync_offsets = sync};
  ReplayTimes t;
  Replay(in, &t);
  const StepTimes s = ComputeStepTimes(in, t, std::vector<NodeId>{3});
  EXPECT_DOUBLE_EQ(s.opt[0], 3.25);
  EXPECT_DOUBLE_EQ(s.opt[1], 6.25);
}

// Launch delays shift an op's start after its deps; a root starts at
// root_start + its delay.
TEST(ReplayTest, LaunchDelaysAddToTheStart) {
  const DepGraph g = SmallGraph(false);
  const std::vector<double> cost = {1.0, 2.0, 0.5, 0.25};
  const std::vector<float> delay = {0.5f, 0.25f, 0.0f, 1.0f};
  const std::vector<uint32_t> sync = {0, 1};
  const ReplayInput in{.graph = &g, .num_lanes = 1, .cost = cost,
                       .launch_delay = delay, .sync_offsets = sync,
                       .root_start = 10.0};
  ReplayTimes t;
  Replay(in, &t);
  EXPECT_DOUBLE_EQ(t.start[0], 10.5);
  EXPECT_DOUBLE_EQ(t.start[1], 11.75);
  EXPECT_DOUBLE_EQ(t.start[3], 14.75);  // 13.75 + 1
  EXPECT_DOUBLE_EQ(t.end[2], 15.25);
}

}  // namespace
}  // namespace strag::replay
