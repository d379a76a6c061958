// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/layout_inference.h"

#include <gtest/gtest.h>

#include <vector>

#include "graph/generic/generic_test_util.h"
#include "graph/generic/p2p_peers.h"

namespace strag::graph {
namespace {

using testing::TraceBuilder;
using trace::OpType;

constexpr double kStepUs = 10'000;
constexpr double kBaseUs = 1e6;

// A GPipe-like step of a `pp`-stage pipeline: forward (recv, compute, send)
// down the chain, backward (recv, compute, send) up it. Ranks of pipeline
// d are base + {0, dp, 2 dp, ...} (Megatron order: stage-major).
std::vector<trace::RankTrace> Pipelines(int32_t dp, int32_t pp) {
  std::vector<trace::RankTrace> traces;
  for (int32_t s = 0; s < pp; ++s) {
    for (int32_t d = 0; d < dp; ++d) {
      const int32_t rank = s * dp + d;
      TraceBuilder t(rank);
      for (int64_t step = 0; step < 2; ++step) {
        const double b = kBaseUs + static_cast<double>(step) * kStepUs;
        const double fwd = b + 100 * s, bwd = b + 5000 - 100 * s;
        t.Step(step, b, b + kStepUs);
        if (s > 0) t.Comm(30, OpType::kRecv, fwd, 10, fwd, -1, -1, rank - dp);
        t.Kernel(7, fwd + 10, 80, fwd + 5);
        if (s + 1 < pp) {
          t.Comm(30, OpType::kSend, fwd + 90, 10, fwd + 89, -1, -1, rank + dp);
        }
        if (s + 1 < pp) {
          t.Comm(30, OpType::kRecv, bwd, 10, bwd, -1, -1, rank + dp);
        }
        t.Kernel(7, bwd + 10, 80, bwd + 5);
        if (s > 0)
          t.Comm(30, OpType::kSend, bwd + 90, 10, bwd + 89, -1, -1, rank - dp);
      }
      traces.push_back(t.Take());
    }
  }
  return traces;
}

TEST(LayoutInferenceTest, StagesFromP2pChains) {
  const auto traces = Pipelines(2, 3);
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l = InferLayout(*model, {});
  EXPECT_TRUE(l.warnings.empty());
  EXPECT_TRUE(l.topology.known);
  EXPECT_EQ(l.topology.dp, 2);
  EXPECT_EQ(l.topology.pp, 3);
  ASSERT_EQ(l.topology.places.size(), 6u);
  for (const trace::RankPlace& p : l.topology.places) {
    EXPECT_EQ(p.pp, p.rank / 2) << "rank " << p.rank;
    EXPECT_EQ(p.dp, p.rank % 2) << "rank " << p.rank;
  }
  EXPECT_NE(l.topology.source.find("p2p"), std::string::npos);
}

TEST(LayoutInferenceTest, FlagsWinAndDisagreementIsWarned) {
  const auto traces = Pipelines(2, 3);
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l =
      InferLayout(*model, {.dp = 3, .pp = 2, .world_size = 6});
  EXPECT_EQ(l.topology.dp, 3);
  EXPECT_EQ(l.topology.pp, 2);
  EXPECT_EQ(l.topology.places[4].pp, 1);
  EXPECT_EQ(l.topology.places[4].dp, 1);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_NE(l.warnings[0].find("suggest 3"), std::string::npos);
}

TEST(LayoutInferenceTest, FlagsThatDoNotFitFallBackToInference) {
  const auto traces = Pipelines(2, 3);
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l =
      InferLayout(*model, {.dp = 4, .pp = 4, .world_size = 6});
  EXPECT_EQ(l.topology.pp, 3);
  ASSERT_EQ(l.warnings.size(), 1u);
  EXPECT_NE(l.warnings[0].find("does not fit"), std::string::npos);
}

TEST(LayoutInferenceTest, CollapsedTpGroupsFitTheFlags) {
  const auto traces = Pipelines(2, 2);  // one traced rank per TP group of 4
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l =
      InferLayout(*model, {.dp = 2, .pp = 2, .tp = 4, .world_size = 4});
  EXPECT_TRUE(l.warnings.empty());
  EXPECT_EQ(l.topology.places[3].pp, 1);
  EXPECT_EQ(l.topology.places[3].dp, 1);
}

// The same pipelines with every peer unknown (torch 1.13's gloo).
std::vector<trace::RankTrace> WithoutPeers(std::vector<trace::RankTrace> t) {
  for (trace::RankTrace& r : t) {
    for (trace::CommOp& c : r.comms) c.peer = -1;
    r.world_size = static_cast<int32_t>(t.size());
  }
  return t;
}

TEST(LayoutInferenceTest, StagesFromSignaturesWithoutPeers) {
  const auto traces = WithoutPeers(Pipelines(2, 2));
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l = InferLayout(*model, {});
  EXPECT_TRUE(l.topology.known);
  EXPECT_EQ(l.topology.pp, 2);
  EXPECT_EQ(l.topology.dp, 2);
  for (const trace::RankPlace& p : l.topology.places) {
    EXPECT_EQ(p.pp, p.rank / 2) << "rank " << p.rank;
  }
  EXPECT_NE(l.topology.source.find("signatures"), std::string::npos);
}

TEST(LayoutInferenceTest, PurePipelineWithoutPeersIsOneRankPerStage) {
  // Stages 1 and 2 share a signature; stage 0 sends first, 3 is the end.
  const auto traces = WithoutPeers(Pipelines(1, 4));
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l = InferLayout(*model, {});
  EXPECT_EQ(l.topology.pp, 4);
  EXPECT_EQ(l.topology.dp, 1);
  for (const trace::RankPlace& p : l.topology.places) {
    EXPECT_EQ(p.pp, p.rank) << "rank " << p.rank;
  }
}

TEST(LayoutInferenceTest, PeersFromStagesPairTheP2p) {
  auto traces = WithoutPeers(Pipelines(2, 3));
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l = InferLayout(*model, {});
  ASSERT_TRUE(l.peers_unknown);
  EXPECT_GT(AssignPipelinePeers(*model, l.topology, &traces), 0);
  auto paired = BuildGenericModel(traces);
  ASSERT_TRUE(paired.ok()) << paired.status().message();
  EXPECT_EQ(paired->counters.p2p_unmatched, 0);
  const InferredLayout again = InferLayout(*paired, {});
  EXPECT_FALSE(again.peers_unknown);
  EXPECT_EQ(again.topology.pp, 3);
  EXPECT_EQ(again.topology.dp, 2);
  for (const trace::RankPlace& p : again.topology.places) {
    EXPECT_EQ(p.pp, p.rank / 2) << "rank " << p.rank;
  }
}

TEST(LayoutInferenceTest, NoP2pIsDataParallel) {
  std::vector<trace::RankTrace> traces;
  for (int32_t r = 0; r < 3; ++r) {
    TraceBuilder t(r);
    for (int64_t step = 0; step < 2; ++step) {
      const double b = kBaseUs + static_cast<double>(step) * kStepUs;
      t.Step(step, b, b + kStepUs)
          .Kernel(7, b + 10, 80, b + 5)
          .Comm(30, OpType::kAllReduce, b + 100, 50, b + 90);
    }
    traces.push_back(t.Take());
  }
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const InferredLayout l = InferLayout(*model, {});
  EXPECT_TRUE(l.topology.known);
  EXPECT_EQ(l.topology.dp, 3);
  EXPECT_EQ(l.topology.pp, 1);
  EXPECT_EQ(l.topology.places[2].dp, 2);
}

}  // namespace
}  // namespace strag::graph
