// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/generic_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/generic/generic_test_util.h"

namespace strag::graph {
namespace {

using testing::TraceBuilder;
using trace::OpType;

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr double kStepUs = 10'000;  // 10 ms per step
constexpr double kBaseUs = 1e6;     // traces start 1 s into their clock

using Edge = std::pair<NodeId, NodeId>;

std::set<Edge> Edges(const DepGraph& g) {
  std::set<Edge> out;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    for (const uint32_t* u = g.dep_begin(v); u != g.dep_end(v); ++u) {
      out.insert({*u, v});
    }
  }
  return out;
}

std::vector<std::vector<NodeId>> Groups(const DepGraph& g) {
  std::vector<std::vector<NodeId>> out;
  for (const CommGroup& c : g.groups()) out.push_back(c.members);
  return out;
}

bool HasWarning(const GenericModel& m, const std::string& needle) {
  return std::any_of(m.warnings.begin(), m.warnings.end(),
                     [&](const std::string& w) {
                       return w.find(needle) != std::string::npos;
                     });
}

std::string AllWarnings(const GenericModel& m) {
  std::string out;
  for (const std::string& w : m.warnings) out += w + "\n";
  return out;
}

// The worked DDP example of one rank (rank_edges.h): compute stream 7, NCCL
// stream 20, two gradient buckets, an optimizer that waits for the second.
// All times relative to the step's start `b` (us); launches in CPU order.
void DdpStep(TraceBuilder* t, int32_t group, int64_t step, double b) {
  t->Step(step, b, b + kStepUs);
  t->Kernel(7, b + 10, 20, b + 1)    // K1 [10, 30]
      .Kernel(7, b + 30, 20, b + 2)  // K2
      .Kernel(7, b + 50, 20, b + 3)  // K3 ends at 70
      .Comm(20, OpType::kAllReduce, b + 70, 30, b + 4, group, 2 * step)
      .Kernel(7, b + 70, 20, b + 5)  // K4 [70, 90]
      .Kernel(7, b + 90, 20, b + 6)  // K5 ends at 110
      .Comm(20, OpType::kAllReduce, b + 110, 30, b + 7, group, 2 * step + 1)
      .Kernel(7, b + 142, 18, b + 8);  // optimizer, waited for AR #1
}

std::vector<trace::RankTrace> TwoRankDdp(int64_t skew1_ns) {
  std::vector<trace::RankTrace> traces;
  for (int32_t r = 0; r < 2; ++r) {
    TraceBuilder t(r, r == 1 ? skew1_ns : 0);
    const int32_t g = t.Group("0", {0, 1});
    for (int64_t s = 0; s < 3; ++s)
      DdpStep(&t, g, s, kBaseUs + static_cast<double>(s) * kStepUs);
    traces.push_back(t.Take());
  }
  return traces;
}

TEST(GenericModelTest, TwoRankDdpNodesEdgesAndGroups) {
  auto traces = TwoRankDdp(37 * kMs);
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const GenericModel& m = *model;
  EXPECT_EQ(m.ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(m.steps, (std::vector<int64_t>{0, 1, 2}));
  ASSERT_EQ(m.nodes.size(), 10u);
  // Rank 0: compute #0, all-reduce #0, compute #1, all-reduce #1, compute #2.
  const std::vector<std::pair<OpType, int32_t>> expected = {
      {OpType::kCompute, 0},
      {OpType::kAllReduce, 0},
      {OpType::kCompute, 1},
      {OpType::kAllReduce, 1},
      {OpType::kCompute, 2}};
  for (NodeId v = 0; v < 10; ++v) {
    EXPECT_EQ(m.nodes[v].rank_index, v < 5 ? 0 : 1);
    EXPECT_EQ(m.nodes[v].type, expected[v % 5].first) << v;
    EXPECT_EQ(m.nodes[v].seq, expected[v % 5].second) << v;
  }
  EXPECT_EQ(DescribeNode(m, 6), "rank 1 all-reduce #0");
  EXPECT_EQ(DescribeNode(m, 4), "rank 0 compute #2 (stream 7)");
  // Stream order 0->2->4 and 1->3; launch 0->1 (K3 ended as AR #0 started)
  // and 2->3; wait 3->4 (the optimizer started 2 us after AR #1 ended).
  std::set<Edge> want;
  for (NodeId b : {0u, 5u}) {
    for (Edge e : {Edge{0, 2}, Edge{2, 4}, Edge{1, 3}, Edge{0, 1}, Edge{2, 3},
                   Edge{3, 4}}) {
      want.insert({b + e.first, b + e.second});
    }
  }
  EXPECT_EQ(Edges(m.graph), want);
  EXPECT_EQ(Groups(m.graph),
            (std::vector<std::vector<NodeId>>{{1, 6}, {3, 8}}));
  for (const CommGroup& g : m.graph.groups()) EXPECT_FALSE(g.dp_sync);
  EXPECT_EQ(m.sink_nodes, (std::vector<NodeId>{3, 4, 8, 9}));
  EXPECT_TRUE(m.detached_nodes.empty());
  // Clocks: rank 1 reads 37 ms ahead; aligned times agree with rank 0's.
  EXPECT_EQ(m.clock.offset_ns, (std::vector<int64_t>{0, -37 * kMs}));
  EXPECT_EQ(m.clock.collectives, 6);
  EXPECT_EQ(m.clock.residual_max_ns, 0);
  for (size_t s = 0; s < 3; ++s) {
    for (NodeId v = 0; v < 5; ++v) {
      EXPECT_EQ(m.start(v, s), m.start(v + 5, s));
      EXPECT_EQ(m.dur(v, s), m.dur(v + 5, s));
    }
  }
  const int64_t b1 = static_cast<int64_t>((kBaseUs + kStepUs) * kUs);
  EXPECT_EQ(m.start(0, 1), b1 + 10 * kUs);
  EXPECT_EQ(m.dur(0, 1), 60 * kUs);  // K1..K3 merged
  EXPECT_EQ(m.dur(2, 1), 40 * kUs);  // K4, K5
  EXPECT_EQ(m.counters.ops_used, 2 * 3 * 8);
  EXPECT_EQ(m.counters.collectives, 2);
  EXPECT_EQ(m.counters.edge_violations, 0);
  EXPECT_TRUE(m.warnings.empty()) << AllWarnings(m);
}

// A DDP-like job of n ranks on the true clock: forward F, backward B0, AR
// #0, B1, AR #1, optimizer. Each AR ends when its last member is ready plus
// 20 us (each member's end off by up to `noise_ns`); rank `slow` computes
// 1.5x slower. Rank r's clock reads true + skew[r].
std::vector<trace::RankTrace> DdpJob(const std::vector<int64_t>& skew,
                                     int64_t noise_ns, int32_t slow,
                                     int64_t steps) {
  const size_t n = skew.size();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> noise(-noise_ns, noise_ns);
  std::vector<TraceBuilder> t;
  std::vector<int32_t> all;
  for (size_t r = 0; r < n; ++r) all.push_back(static_cast<int32_t>(r));
  for (size_t r = 0; r < n; ++r) {
    t.emplace_back(static_cast<int32_t>(r), skew[r]);
    t[r].Group("0", all);
  }
  for (int64_t s = 0; s < steps; ++s) {
    const double b = kBaseUs + static_cast<double>(s) * kStepUs;
    std::vector<double> e0(n), e1(n), a0(n), a1(n);
    double t0 = 0, t1 = 0;
    for (size_t r = 0; r < n; ++r) {
      const double k = static_cast<int32_t>(r) == slow ? 1.5 : 1.0;
      e0[r] = b + 10 + 150 * k;  // F (100) + B0 (50)
      e1[r] = e0[r] + 50 * k;
      t0 = std::max(t0, e0[r] + 20);
    }
    for (size_t r = 0; r < n; ++r) {
      a0[r] = t0 + static_cast<double>(noise(rng)) / kUs;
      t1 = std::max(t1, std::max(e1[r], a0[r]) + 20);
    }
    for (size_t r = 0; r < n; ++r) {
      const double k = static_cast<int32_t>(r) == slow ? 1.5 : 1.0;
      const double s1 = std::max(e1[r], a0[r]);
      a1[r] = t1 + static_cast<double>(noise(rng)) / kUs;
      t[r].Step(s, b, b + kStepUs)
          .Kernel(7, b + 10, 100 * k, b + 1)
          .Kernel(7, b + 10 + 100 * k, 50 * k, b + 2)
          .Comm(20, OpType::kAllReduce, e0[r], a0[r] - e0[r], b + 3, 0)
          .Kernel(7, e0[r], 50 * k, b + 4)
          .Comm(20, OpType::kAllReduce, s1, a1[r] - s1, b + 5, 0)
          .Kernel(7, a1[r] + 3, 30, b + 6);
    }
  }
  std::vector<trace::RankTrace> out;
  for (auto& b : t) out.push_back(b.Take());
  return out;
}

TEST(GenericModelTest, FourRankDdpWithStraggler) {
  const std::vector<int64_t> skew = {0, 12 * kMs, -31 * kMs, 49 * kMs};
  auto traces = DdpJob(skew, 0, 2, 4);
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const GenericModel& m = *model;
  ASSERT_EQ(m.nodes.size(), 20u);
  EXPECT_EQ(m.steps.size(), 4u);
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(m.clock.offset_ns[r], -skew[r]) << r;
  }
  // Every rank: stream 0->2->4, 1->3; launch 0->1, 2->3; wait 3->4.
  std::set<Edge> want;
  for (NodeId b = 0; b < 20; b += 5) {
    for (Edge e : {Edge{0, 2}, Edge{2, 4}, Edge{1, 3}, Edge{0, 1}, Edge{2, 3},
                   Edge{3, 4}}) {
      want.insert({b + e.first, b + e.second});
    }
  }
  EXPECT_EQ(Edges(m.graph), want);
  EXPECT_EQ(Groups(m.graph),
            (std::vector<std::vector<NodeId>>{{1, 6, 11, 16}, {3, 8, 13, 18}}));
  // The slow rank's first segment is 1.5x longer; its all-reduce the
  // shortest (it arrived last).
  EXPECT_EQ(m.dur(10, 0), 225 * kUs);
  EXPECT_EQ(m.dur(0, 0), 150 * kUs);
  EXPECT_EQ(m.dur(11, 0), 20 * kUs);
  EXPECT_TRUE(m.warnings.empty()) << AllWarnings(m);
}

// The acceptance target end to end: 64 ranks, offsets up to +/-50 ms, ends
// within 3 us of each other: offsets recovered within 10 us.
TEST(GenericModelTest, SixtyFourRanksClockOffsets) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> d(-50 * kMs, 50 * kMs);
  std::vector<int64_t> skew(64);
  for (auto& s : skew) s = d(rng);
  skew[0] = 0;
  auto traces = DdpJob(skew, 3 * kUs, 17, 6);
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  int64_t worst = 0;
  for (size_t r = 0; r < 64; ++r) {
    worst = std::max(worst, std::abs(model->clock.offset_ns[r] + skew[r]));
  }
  EXPECT_LT(worst, 10 * kUs);
  EXPECT_EQ(model->clock.collectives, 12);
  EXPECT_LE(model->clock.residual_max_ns, 6 * kUs);
  EXPECT_EQ(model->steps.size(), 6u);
  EXPECT_EQ(model->nodes.size(), 64u * 5);
}

// Pipeline: rank 0 sends activations to rank 1 and receives gradients back.
TEST(GenericModelTest, PipelineSendRecv) {
  TraceBuilder r0(0), r1(1, -20 * kMs);
  for (int64_t s = 0; s < 2; ++s) {
    const double b = kBaseUs + static_cast<double>(s) * kStepUs;
    r0.Step(s, b, b + kStepUs)
        .Kernel(7, b + 10, 40, b + 1)                            // F0
        .Comm(30, OpType::kSend, b + 50, 10, b + 2, -1, -1, 1)   // send
        .Kernel(7, b + 50, 40, b + 3)                            // F1
        .Comm(30, OpType::kRecv, b + 60, 140, b + 4, -1, -1, 1)  // recv
        .Kernel(7, b + 202, 48, b + 5);                          // B0
    r1.Step(s, b, b + kStepUs)
        .Comm(30, OpType::kRecv, b + 5, 55, b + 1, -1, -1, 0)
        .Kernel(7, b + 62, 38, b + 2)  // F0' waits for the recv
        .Kernel(7, b + 100, 50, b + 3)
        .Comm(30, OpType::kSend, b + 150, 50, b + 4, -1, -1, 0);
  }
  std::vector<trace::RankTrace> traces = {r0.Take(), r1.Take()};
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const GenericModel& m = *model;
  // Rank 0: 0 compute#0, 1 send#0, 2 compute#1, 3 recv#0, 4 compute#2.
  // Rank 1: 5 recv#0, 6 compute#0, 7 send#0.
  ASSERT_EQ(m.nodes.size(), 8u);
  EXPECT_EQ(m.nodes[1].type, OpType::kSend);
  EXPECT_EQ(m.nodes[5].type, OpType::kRecv);
  EXPECT_EQ(m.nodes[6].type, OpType::kCompute);
  const std::set<Edge> want = {
      {0, 2}, {2, 4}, {1, 3},  // rank 0 streams
      {0, 1},                  // F0 -> send
      {0, 3},                  // F0 -> recv (F1 was still running)
      {3, 4},                  // B0 waited for the recv
      {5, 7},                  // rank 1 stream 30
      {6, 7},                  // compute -> send
      {5, 6},                  // F0' waited for the recv
  };
  EXPECT_EQ(Edges(m.graph), want);
  EXPECT_EQ(Groups(m.graph),
            (std::vector<std::vector<NodeId>>{{1, 5}, {3, 7}}));
  EXPECT_EQ(m.clock.offset_ns[1], 20 * kMs);
  EXPECT_EQ(m.counters.p2p_unmatched, 0);
  EXPECT_TRUE(m.warnings.empty()) << AllWarnings(m);
}

// TP pairs {0,1} and {2,3} (order-matched: no seq) plus a global all-reduce.
TEST(GenericModelTest, SubgroupCollectives) {
  const std::vector<int64_t> skew = {0, 3 * kMs, -8 * kMs, 44 * kMs};
  std::vector<trace::RankTrace> traces;
  for (int32_t r = 0; r < 4; ++r) {
    TraceBuilder t(r, skew[static_cast<size_t>(r)]);
    const int32_t tp = r < 2 ? t.Group("1", {0, 1}) : t.Group("2", {2, 3});
    const int32_t world = t.Group("0", {0, 1, 2, 3});
    for (int64_t s = 0; s < 2; ++s) {
      const double b = kBaseUs + static_cast<double>(s) * kStepUs;
      const double tp_end = b + (r < 2 ? 60 : 80);
      t.Step(s, b, b + kStepUs)
          .Kernel(7, b + 10, 30, b + 1)
          .Comm(20, OpType::kAllGather, b + 40, tp_end - b - 40, b + 2, tp)
          .Kernel(7, tp_end + 1, 20, b + 3)
          .Comm(20, OpType::kAllReduce, b + 101, 49, b + 4, world);
    }
    traces.push_back(t.Take());
  }
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const GenericModel& m = *model;
  ASSERT_EQ(m.nodes.size(), 16u);  // per rank: compute, AG, compute, AR
  EXPECT_EQ(Groups(m.graph), (std::vector<std::vector<NodeId>>{
                                 {1, 5}, {3, 7, 11, 15}, {9, 13}}));
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(m.clock.offset_ns[r], -skew[r]) << r;
  }
  EXPECT_TRUE(m.warnings.empty()) << AllWarnings(m);
}

// Rank 3's file is missing (group "0" lists it) and rank 2 never joins the
// last all-reduce (seq 2 of each step): the analysis goes on with warnings.
TEST(GenericModelTest, MissingMembers) {
  std::vector<trace::RankTrace> traces;
  for (int32_t r = 0; r < 3; ++r) {
    TraceBuilder t(r);
    const int32_t g = t.Group("0", {0, 1, 2, 3});
    for (int64_t s = 0; s < 2; ++s) {
      const double b = kBaseUs + static_cast<double>(s) * kStepUs;
      t.Step(s, b, b + kStepUs).Kernel(7, b + 10, 10, b + 1);
      t.Comm(20, OpType::kAllReduce, b + 20, 10, b + 2, g, 10 * s);
      t.Kernel(7, b + 30, 10, b + 3);
      if (r != 1)
        t.Comm(20, OpType::kAllReduce, b + 40, 10, b + 4, g, 10 * s + 1);
      t.Kernel(7, b + 60, 10, b + 5);
      if (r != 2)
        t.Comm(20, OpType::kAllReduce, b + 70, 10, b + 6, g, 10 * s + 2);
    }
    traces.push_back(t.Take());
  }
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const GenericModel& m = *model;
  EXPECT_EQ(m.steps.size(), 2u);
  EXPECT_EQ(m.counters.collectives_incomplete, 2);
  EXPECT_TRUE(HasWarning(m,
                         "all-reduce seq 1 of group '0' of ranks 0-3: rank 1 "
                         "never joined"))
      << AllWarnings(m);
  EXPECT_TRUE(HasWarning(m,
                         "all-reduce seq 2 of group '0' of ranks 0-3: rank 2 "
                         "never joined"))
      << AllWarnings(m);
  EXPECT_TRUE(HasWarning(m, "group '0' of ranks 0-3: rank 3 has no trace"))
      << AllWarnings(m);
  // Rank 1: compute, AR seq0, compute (merged across the skipped AR),
  // AR seq2; the seq-1 all-reduce groups ranks 0 and 2 only.
  EXPECT_EQ(m.graph.groups().size(), 3u);
  EXPECT_EQ(m.graph.groups()[1].members.size(), 2u);
}

// Step 2 has an extra all-reduce on rank 1 only: dropped with a warning that
// names the step and the rank; the other steps are kept.
TEST(GenericModelTest, StepWithDifferentStructureIsDropped) {
  std::vector<trace::RankTrace> traces;
  for (int32_t r = 0; r < 2; ++r) {
    TraceBuilder t(r);
    const int32_t g = t.Group("0", {0, 1});
    for (int64_t s = 1; s <= 4; ++s) {
      const double b = kBaseUs + static_cast<double>(s) * kStepUs;
      t.Step(s, b, b + kStepUs)
          .Kernel(7, b + 10, 10, b + 1)
          .Comm(20, OpType::kAllReduce, b + 20, 10, b + 2, g);
      if (r == 1 && s == 2) {
        t.Comm(20, OpType::kAllReduce, b + 30, 10, b + 3, g);
      }
      t.Kernel(7, b + 40, 10, b + 4);
    }
    traces.push_back(t.Take());
  }
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->steps, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(model->reference_step, 1);
  EXPECT_EQ(model->counters.steps_dropped, 1);
  EXPECT_TRUE(HasWarning(*model,
                         "step 2: rank 1: 4 nodes (2 compute, 2 "
                         "all-reduce) instead of 3 nodes (2 compute, 1 "
                         "all-reduce)"))
      << AllWarnings(*model);
  EXPECT_EQ(model->nodes.size(), 6u);
}

// A step missing on one rank is dropped; a rank without any step is left out.
TEST(GenericModelTest, StepMissingOnARank) {
  std::vector<trace::RankTrace> traces;
  for (int32_t r = 0; r < 3; ++r) {
    TraceBuilder t(r);
    for (int64_t s = 0; s < 3; ++s) {
      if (r == 1 && s == 0) continue;
      const double b = kBaseUs + static_cast<double>(s) * kStepUs;
      if (r != 2) t.Step(s, b, b + kStepUs);
      t.Kernel(7, b + 10, 10, b + 1)
          .Comm(20, OpType::kAllReduce, b + 20, 10, b + 2);
    }
    traces.push_back(t.Take());
  }
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(model->steps, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(model->counters.ranks_without_steps, 1);
  EXPECT_EQ(model->counters.ops_outside_steps, 6);  // rank 2's
  EXPECT_TRUE(HasWarning(*model, "step 0: no ProfilerStep#0 on rank 1"))
      << AllWarnings(*model);
  EXPECT_TRUE(HasWarning(*model, "rank 2 (rank2.json): no op inside"))
      << AllWarnings(*model);
}

// CPU-only (gloo): the training thread (tid 100) runs the compute ops, a gloo
// worker thread (tid 200) the all-reduce; no launch times; each process's
// clock starts at zero.
TEST(GenericModelTest, CpuOnlyGloo) {
  std::vector<trace::RankTrace> traces;
  const std::vector<int64_t> skew = {0, -1'234'567'000};
  for (int32_t r = 0; r < 2; ++r) {
    TraceBuilder t(r, skew[static_cast<size_t>(r)]);
    for (int64_t s = 0; s < 2; ++s) {
      const double b = 2e6 + static_cast<double>(s) * kStepUs;
      t.Step(s, b, b + kStepUs)
          .Kernel(100, b + 0, 10)   // forward
          .Kernel(100, b + 10, 10)  // backward, still running at 15
          .Comm(200, OpType::kAllReduce, b + 15, 10)
          .Kernel(100, b + 26, 4);  // optimizer after wait()
    }
    auto tr = t.Take();
    tr.cpu_only = true;
    tr.backend = "gloo";
    traces.push_back(std::move(tr));
  }
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const GenericModel& m = *model;
  // Per rank: 0 compute#0 [0,20], 1 all-reduce#0, 2 compute#1 [26,30].
  ASSERT_EQ(m.nodes.size(), 6u);
  const std::set<Edge> want = {{0, 2}, {1, 2}, {3, 5}, {4, 5}};
  EXPECT_EQ(Edges(m.graph), want);
  EXPECT_EQ(Groups(m.graph), (std::vector<std::vector<NodeId>>{{1, 4}}));
  EXPECT_EQ(m.clock.offset_ns[1], 1'234'567'000);
  EXPECT_EQ(m.dur(0, 0), 20 * kUs);
  EXPECT_TRUE(m.warnings.empty()) << AllWarnings(m);
}

// Ops that overlap on one stream (nested CPU ops, bad input) give a stream
// edge that the times contradict: counted and named, not fatal.
TEST(GenericModelTest, OverlapOnOneStreamIsReported) {
  TraceBuilder t(0);
  t.Step(0, 0, 100)
      .Kernel(100, 0, 10)
      .Comm(200, OpType::kAllReduce, 3, 1)
      .Kernel(100, 5, 3);  // starts inside the first op
  std::vector<trace::RankTrace> traces = {t.Take()};
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->counters.edge_violations, 1);
  EXPECT_TRUE(HasWarning(*model,
                         "rank 0 compute #0 (stream 100) ends 5000 ns "
                         "after rank 0 compute #1 (stream 100)"))
      << AllWarnings(*model);
}

// The graph comes from the reference step; an edge that another step's
// times contradict (a dependency that does not always hold) is counted.
TEST(GenericModelTest, EdgeContradictedInAnotherStep) {
  TraceBuilder t(0);
  for (int64_t s = 0; s < 2; ++s) {
    const double b = kBaseUs + static_cast<double>(s) * kStepUs;
    t.Step(s, b, b + kStepUs)
        .Kernel(7, b + 10, 10, b + 1)
        .Comm(20, OpType::kAllReduce, b + 20, 10, b + 2)
        .Kernel(7, s == 0 ? b + 33 : b + 25, 5, b + 3);  // waits in step 0
  }
  std::vector<trace::RankTrace> traces = {t.Take()};
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->reference_step, 0);
  EXPECT_EQ(Edges(model->graph), (std::set<Edge>{{0, 2}, {0, 1}, {1, 2}}));
  EXPECT_EQ(model->counters.edge_violations, 0);
  EXPECT_EQ(model->counters.edge_violations_other_steps, 1);
  EXPECT_TRUE(HasWarning(*model,
                         "e.g. step 1: rank 0 all-reduce #0 ends "
                         "5000 ns after rank 0 compute #1"))
      << AllWarnings(*model);
}

// A side stream nothing waits on is detached: exempt and warned about.
TEST(GenericModelTest, DetachedSideStream) {
  TraceBuilder t(0);
  t.Step(0, 0, 1000)
      .Kernel(7, 10, 10, 1)
      .Comm(20, OpType::kAllReduce, 20, 10, 2)
      .Kernel(7, 31, 10, 3)
      .Kernel(9, 100, 10, 99);  // memcpy on stream 9, unrelated
  std::vector<trace::RankTrace> traces = {t.Take()};
  auto model = BuildGenericModel(traces);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->detached_nodes, (std::vector<NodeId>{3}));
  EXPECT_TRUE(HasWarning(*model, "rank 0 compute #2 (stream 9) shares no"))
      << AllWarnings(*model);
}

TEST(GenericModelTest, Errors) {
  EXPECT_EQ(BuildGenericModel({}).status().code(), StatusCode::kInvalidInput);
  // Ops but no ProfilerStep span.
  TraceBuilder a(0);
  a.Kernel(7, 10, 10, 1);
  std::vector<trace::RankTrace> no_steps = {a.Take()};
  auto r = BuildGenericModel(no_steps);
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("ProfilerStep"), std::string::npos)
      << r.status().message();
  // Two traces of one rank.
  TraceBuilder b(0), c(0);
  b.Step(0, 0, 100).Kernel(7, 10, 10, 1);
  c.Step(0, 0, 100).Kernel(7, 10, 10, 1);
  std::vector<trace::RankTrace> dup = {b.Take(), c.Take()};
  r = BuildGenericModel(dup);
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("both claim rank 0"), std::string::npos);
  // No common step.
  TraceBuilder d(0), e(1);
  d.Step(1, 0, 100).Kernel(7, 10, 10, 1);
  e.Step(2, 0, 100).Kernel(7, 10, 10, 1);
  std::vector<trace::RankTrace> disjoint = {d.Take(), e.Take()};
  r = BuildGenericModel(disjoint);
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("no step is present on every rank"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace strag::graph
