// SPDX-License-Identifier: Apache-2.0
#include "graph/megatron/megatron_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace strag::graph {
namespace {

using trace::OpType;

// Reference ops from a program order: op k of a stage starts at k and lasts
// half a unit, which is what the Megatron stream rules look at.
struct Prog {
  OpType type;
  int32_t seq;
};
std::vector<RefOp> FromPrograms(const std::vector<std::vector<Prog>>& stages) {
  std::vector<RefOp> ops;
  for (size_t s = 0; s < stages.size(); ++s) {
    for (size_t k = 0; k < stages[s].size(); ++k) {
      const Prog& p = stages[s][k];
      const bool chunked = trace::IsCompute(p.type) ||
                           p.type == OpType::kParamsAllGather ||
                           p.type == OpType::kGradsReduceScatter;
      ops.push_back(
          RefOp{{p.type, p.seq, static_cast<int32_t>(s)},
                chunked ? 0 : -1,
                trace::IsCompute(p.type) ? static_cast<int32_t>(s) : -1,
                static_cast<float>(k),
                static_cast<float>(k) + 0.5f});
    }
  }
  return ops;
}

constexpr OpType F = OpType::kForwardCompute, B = OpType::kBackwardCompute,
                 FS = OpType::kForwardSend, FR = OpType::kForwardRecv,
                 BS = OpType::kBackwardSend, BR = OpType::kBackwardRecv,
                 AG = OpType::kParamsAllGather,
                 RS = OpType::kGradsReduceScatter, GC = OpType::kGc,
                 LN = OpType::kLayernormGradsAllReduce,
                 EMB = OpType::kEmbeddingGradsAllReduce,
                 CLIP = OpType::kOptimizerClipMainGrad,
                 OPT = OpType::kOptimizer;

// 1F1B, 2 stages, 2 microbatches (Megatron order, whatif-method.md §4.2).
std::vector<std::vector<Prog>> TwoStageTwoMicrobatch() {
  return {
      {{AG, 0},
       {F, 0},
       {FS, 0},
       {F, 1},
       {FS, 1},
       {BR, 0},
       {B, 0},
       {BR, 1},
       {B, 1},
       {GC, 0},
       {LN, 0},
       {EMB, 0},
       {RS, 0},
       {CLIP, 0},
       {OPT, 0}},
      {{AG, 0},
       {FR, 0},
       {F, 0},
       {B, 0},
       {BS, 0},
       {FR, 1},
       {F, 1},
       {B, 1},
       {BS, 1},
       {GC, 0},
       {LN, 0},
       {EMB, 0},
       {RS, 0},
       {CLIP, 0},
       {OPT, 0}},
  };
}

std::string Name(const MegatronModel& m, NodeId v) {
  const OpKey& k = m.keys[v];
  return std::string(trace::OpTypeName(k.type)) + std::to_string(k.seq_id) +
         "@" + std::to_string(k.stage);
}

std::set<std::string> DepsOf(const MegatronModel& m, OpType t, int32_t seq,
                             int32_t stage) {
  const auto v = static_cast<NodeId>(m.index.Find({t, seq, stage}));
  std::set<std::string> out;
  for (const uint32_t* u = m.graph.dep_begin(v); u != m.graph.dep_end(v); ++u) {
    out.insert(Name(m, *u));
  }
  return out;
}

using Deps = std::set<std::string>;

// Every dependency of the 2-stage, 2-microbatch, DP 2 job, checked by hand
// against the rules E1-E8 of whatif-spec.md §3.4.
TEST(MegatronModelTest, TwoStageTwoMicrobatchEdges) {
  const auto ops = FromPrograms(TwoStageTwoMicrobatch());
  auto model = BuildMegatronModel(ops, {.pp = 2, .vpp = 1, .use_dp = true});
  ASSERT_TRUE(model.ok()) << model.status().message();
  const MegatronModel& m = *model;
  // Stage 0 (first): warm-up F0, then F1 B0, then B1.
  EXPECT_EQ(DepsOf(m, AG, 0, 0), Deps{});
  EXPECT_EQ(DepsOf(m, F, 0, 0), (Deps{"params-all-gather0@0"}));  // E6
  EXPECT_EQ(DepsOf(m, F, 1, 0), (Deps{"forward-compute0@0"}));    // E1
  EXPECT_EQ(DepsOf(m, FS, 0, 0), (Deps{"forward-compute0@0"}));   // E3a
  EXPECT_EQ(DepsOf(m, FS, 1, 0),
            (Deps{"forward-compute1@0", "forward-send0@0"}));    // E3a, E2
  EXPECT_EQ(DepsOf(m, BR, 0, 0), (Deps{"forward-compute0@0"}));  // E4
  EXPECT_EQ(DepsOf(m, B, 0, 0),
            (Deps{"forward-compute1@0", "backward-recv0@0"}));  // E1, E3b
  EXPECT_EQ(DepsOf(m, BR, 1, 0),
            (Deps{"backward-recv0@0", "backward-compute0@0"}));  // E2, E3b
  EXPECT_EQ(DepsOf(m, B, 1, 0),
            (Deps{"backward-compute0@0", "backward-recv1@0"}));
  EXPECT_EQ(DepsOf(m, GC, 0, 0), (Deps{"backward-compute1@0"}));  // E8
  EXPECT_EQ(DepsOf(m, LN, 0, 0), (Deps{"gc0@0"}));
  EXPECT_EQ(DepsOf(m, EMB, 0, 0), (Deps{"layernorm-grads-all-reduce0@0"}));
  EXPECT_EQ(DepsOf(m, RS, 0, 0),
            (Deps{"params-all-gather0@0", "embedding-grads-all-reduce0@0"}));
  EXPECT_EQ(DepsOf(m, CLIP, 0, 0), (Deps{"grads-reduce-scatter0@0"}));
  EXPECT_EQ(DepsOf(m, OPT, 0, 0), (Deps{"optimizer-clip-main-grad0@0"}));
  // Stage 1 (last): strict F/B alternation, no warm-up edge.
  EXPECT_EQ(DepsOf(m, FR, 0, 1), Deps{});  // a root
  EXPECT_EQ(DepsOf(m, F, 0, 1),
            (Deps{"params-all-gather0@1", "forward-recv0@1"}));
  EXPECT_EQ(DepsOf(m, B, 0, 1), (Deps{"forward-compute0@1"}));
  EXPECT_EQ(DepsOf(m, BS, 0, 1), (Deps{"backward-compute0@1"}));
  EXPECT_EQ(DepsOf(m, FR, 1, 1),
            (Deps{"forward-recv0@1", "forward-compute0@1"}));
  EXPECT_EQ(DepsOf(m, F, 1, 1),
            (Deps{"backward-compute0@1", "forward-recv1@1"}));
  EXPECT_EQ(DepsOf(m, BS, 1, 1),
            (Deps{"backward-send0@1", "backward-compute1@1"}));
  EXPECT_EQ(DepsOf(m, GC, 0, 1), (Deps{"backward-compute1@1"}));
  EXPECT_EQ(m.optimizer_nodes.size(), 2u);
  EXPECT_TRUE(m.noop_nodes.empty());
}

// Comm groups: 4 p2p pairs, AG and RS per stage (DP-synchronised), the
// embedding pair and one clip group over both stages (DP-synchronised).
TEST(MegatronModelTest, TwoStageTwoMicrobatchGroups) {
  const auto ops = FromPrograms(TwoStageTwoMicrobatch());
  auto model = BuildMegatronModel(ops, {.pp = 2, .vpp = 1, .use_dp = true});
  ASSERT_TRUE(model.ok());
  std::multiset<std::string> groups;
  for (const CommGroup& g : model->graph.groups()) {
    std::string s = g.dp_sync ? "dp:" : "";
    for (NodeId v : g.members) s += Name(*model, v) + " ";
    groups.insert(s);
  }
  const std::multiset<std::string> expected = {
      "forward-send0@0 forward-recv0@1 ",
      "forward-send1@0 forward-recv1@1 ",
      "backward-send0@1 backward-recv0@0 ",
      "backward-send1@1 backward-recv1@0 ",
      "dp:params-all-gather0@0 ",
      "dp:grads-reduce-scatter0@0 ",
      "dp:params-all-gather0@1 ",
      "dp:grads-reduce-scatter0@1 ",
      "embedding-grads-all-reduce0@0 embedding-grads-all-reduce0@1 ",
      "dp:optimizer-clip-main-grad0@0 optimizer-clip-main-grad0@1 ",
  };
  EXPECT_EQ(groups, expected);
  // layernorm is replayed as a plain op (whatif-spec.md §10.2).
  const auto ln = model->index.Find({LN, 0, 0});
  EXPECT_FALSE(model->graph.is_comm(static_cast<NodeId>(ln)));
}

// A forward send on stage 0 whose receive is missing on stage 1.
TEST(MegatronModelTest, MissingPeerIsAnError) {
  auto programs = TwoStageTwoMicrobatch();
  auto& s1 = programs[1];
  s1.erase(std::find_if(s1.begin(), s1.end(), [](const Prog& p) {
    return p.type == FR && p.seq == 1;
  }));
  auto model = BuildMegatronModel(FromPrograms(programs),
                                  {.pp = 2, .vpp = 1, .use_dp = true});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(model.status().message().find("forward-send #1 on stage 0"),
            std::string::npos)
      << model.status().message();
}

// Stage 0 running its backward before its forward closes a loop through the
// p2p pairs: F0@0 -> send -> F0@1 -> B0@1 -> send -> B0@0 -> F0@0.
TEST(MegatronModelTest, CycleIsAnError) {
  const std::vector<std::vector<Prog>> programs = {
      {{AG, 0},
       {BR, 0},
       {B, 0},
       {F, 0},
       {FS, 0},
       {GC, 0},
       {LN, 0},
       {EMB, 0},
       {RS, 0},
       {CLIP, 0},
       {OPT, 0}},
      {{AG, 0},
       {FR, 0},
       {F, 0},
       {B, 0},
       {BS, 0},
       {GC, 0},
       {LN, 0},
       {EMB, 0},
       {RS, 0},
       {CLIP, 0},
       {OPT, 0}},
  };
  auto model = BuildMegatronModel(FromPrograms(programs),
                                  {.pp = 2, .vpp = 1, .use_dp = true});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("cycle"), std::string::npos)
      << model.status().message();
}

// Without DP there are no DP collectives; a trace that has them anyway leaves
// them unconnected, which is reported.
TEST(MegatronModelTest, DpOpsWithoutDpAreRejected) {
  auto model = BuildMegatronModel(FromPrograms(TwoStageTwoMicrobatch()),
                                  {.pp = 2, .vpp = 1, .use_dp = false});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("not connected"), std::string::npos)
      << model.status().message();
}

// Profiler no-ops (whatif-spec.md §3.2): stage 0 records a forward recv
// before and a backward send after every compute, whose peer chunk does not
// exist (type 2: matched, keep their compute edges); the last stage records an
// early forward send and a late backward recv (type 1, by time: stream edges
// only). Every no-op is a singleton group.
TEST(MegatronModelTest, ProfilerNoOps) {
  const std::vector<std::vector<Prog>> programs = {
      {{AG, 0},
       {FR, 0},
       {F, 0},
       {FS, 0},
       {FR, 1},
       {F, 1},
       {FS, 1},
       {BR, 0},
       {B, 0},
       {BS, 0},
       {BR, 1},
       {B, 1},
       {BS, 1},
       {GC, 0},
       {LN, 0},
       {EMB, 0},
       {RS, 0},
       {CLIP, 0},
       {OPT, 0}},
      {{AG, 0},
       {FS, 0},
       {FR, 0},
       {F, 0},
       {B, 0},
       {BS, 0},
       {FR, 1},
       {F, 1},
       {B, 1},
       {BS, 1},
       {BR, 0},
       {GC, 0},
       {LN, 0},
       {EMB, 0},
       {RS, 0},
       {CLIP, 0},
       {OPT, 0}},
  };
  auto ops = FromPrograms(programs);
  // Type 1 needs a margin of 50 us: move the last stage's early send and late
  // recv well away from the computes.
  for (RefOp& op : ops) {
    if (op.key.stage == 1 && op.key.type == FS) op.start = op.end = 0.1f;
    if (op.key.stage == 1 && op.key.type == BR) op.start = op.end = 99.0f;
  }
  auto model = BuildMegatronModel(ops, {.pp = 2, .vpp = 1, .use_dp = true});
  ASSERT_TRUE(model.ok()) << model.status().message();
  const MegatronModel& m = *model;
  std::set<std::string> noops;
  for (NodeId v : m.noop_nodes) noops.insert(Name(m, v));
  EXPECT_EQ(noops,
            (std::set<std::string>{"forward-recv0@0", "forward-recv1@0",
                                   "backward-send0@0", "backward-send1@0",
                                   "forward-send0@1", "backward-recv0@1"}));
  for (NodeId v : m.noop_nodes) {
    const CommGroup& g =
        m.graph.groups()[static_cast<size_t>(m.graph.group_of(v))];
    EXPECT_EQ(g.members.size(), 1u) << Name(m, v);
  }
  // Type 2 keeps E3: recv -> its compute (and the previous compute -> recv).
  EXPECT_EQ(DepsOf(m, F, 1, 0),
            (Deps{"forward-compute0@0", "forward-recv1@0"}));
  EXPECT_EQ(DepsOf(m, FR, 1, 0),
            (Deps{"forward-recv0@0", "forward-compute0@0"}));
  EXPECT_EQ(DepsOf(m, BS, 0, 0),
            (Deps{"backward-compute0@0", "forward-compute0@0"}));  // E3a, E4
  // Type 1 has stream edges only: the early send and the late recv are roots.
  EXPECT_EQ(DepsOf(m, FS, 0, 1), Deps{});
  EXPECT_EQ(DepsOf(m, BR, 0, 1), Deps{});
}

}  // namespace
}  // namespace strag::graph
