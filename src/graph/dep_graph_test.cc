// SPDX-License-Identifier: Apache-2.0
#include "graph/dep_graph.h"

#include <gtest/gtest.h>

#include <string>

namespace strag::graph {
namespace {

std::string Name(NodeId v) { return "op" + std::to_string(v); }

// A chain 0 -> 1 -> 2 with {1, 3} a group and 3 depending on 0: the schedule
// runs 0 first, then the group, then 2.
TEST(DepGraphTest, SchedulesGroupsAsOneUnit) {
  DepGraph g(4);
  g.AddEdge(0, 1);
  g.AddEdge(1, 2);
  g.AddEdge(0, 3);
  g.AddEdge(0, 3);  // duplicate edges are harmless
  ASSERT_TRUE(g.AddGroup({1, 3}, false).ok());
  ASSERT_TRUE(g.Finalize(Name).ok());
  ASSERT_EQ(g.schedule().size(), 3u);
  EXPECT_FALSE(g.schedule()[0].is_group);
  EXPECT_EQ(g.schedule()[0].id, 0u);
  EXPECT_TRUE(g.schedule()[1].is_group);
  EXPECT_EQ(g.schedule()[2].id, 2u);
  EXPECT_EQ(g.num_deps(3), 1u);
  EXPECT_EQ(g.num_edges(), 3u);
}

// 0 -> 1 -> 2 -> 0 is a cycle: Finalize names an op on it.
TEST(DepGraphTest, RejectsCycle) {
  DepGraph g(3);
  g.AddEdge(0, 1);
  g.AddEdge(1, 2);
  g.AddEdge(2, 0);
  const Status s = g.Finalize(Name);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s.message();
}

// A cycle that exists only once the group {0, 2} is collapsed: 0 -> 1 -> 2.
TEST(DepGraphTest, RejectsCycleThroughGroup) {
  DepGraph g(3);
  g.AddEdge(0, 1);
  g.AddEdge(1, 2);
  ASSERT_TRUE(g.AddGroup({0, 2}, false).ok());
  EXPECT_EQ(g.Finalize(Name).code(), StatusCode::kInvalidInput);
}

// Two separate chains are not one connected job.
TEST(DepGraphTest, RejectsDisconnectedGraph) {
  DepGraph g(4);
  g.AddEdge(0, 1);
  g.AddEdge(2, 3);
  const Status s = g.Finalize(Name);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("not connected"), std::string::npos);
}

}  // namespace
}  // namespace strag::graph
