// SPDX-License-Identifier: Apache-2.0
// Megatron program orders: the interleaved schedule table and order against
// Megatron's own example, op counts, p2p pairing under the published
// dependency model, and interleaved jobs through the whole what-if pipeline.

#include "sim/megatron_schedule.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <tuple>
#include <utility>

#include "sim/synth_test_util.h"
#include "sim/trace_synth.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::sim {
namespace {

using trace::OpType;

std::array<int32_t, trace::kNumOpTypes> CountByType(
    const std::vector<ScheduledOp>& ops) {
  std::array<int32_t, trace::kNumOpTypes> n{};
  for (const ScheduledOp& op : ops) ++n[static_cast<size_t>(op.type)];
  return n;
}

int32_t Count(const std::array<int32_t, trace::kNumOpTypes>& n, OpType t) {
  return n[static_cast<size_t>(t)];
}

// Megatron's "PP2 N3M5 with VP2" docstring (p 2, group 3, m 5, v 2): the
// table and the order of rank 0 (w = 5) are exactly the ones printed there.
TEST(MegatronScheduleTest, InterleavedMatchesMegatronDocstring) {
  const std::vector<VirtualMicrobatch> table =
      InterleavedScheduleTable(5, 2, 3);
  const std::vector<int32_t> mb = {0, 1, 2, 0, 1, 2, 3, 4, 3, 4};
  const std::vector<int32_t> chunk = {0, 0, 0, 1, 1, 1, 0, 0, 1, 1};
  ASSERT_EQ(table.size(), mb.size());
  for (size_t k = 0; k < table.size(); ++k) {
    EXPECT_EQ(table[k].microbatch, mb[k]) << k;
    EXPECT_EQ(table[k].chunk, chunk[k]) << k;
  }
  // k > 0: forward of chunk k (1-based), -k: backward of chunk k.
  const std::vector<int32_t> expected = {1,  1, 1,  2, 2,  2,  -2, 1,  -2, 1,
                                         -2, 2, -1, 2, -1, -1, -2, -2, -1, -1};
  const std::vector<ComputeStep> order = InterleavedComputeOrder(0, 2, 5, 2, 3);
  ASSERT_EQ(order.size(), expected.size());
  for (size_t k = 0; k < order.size(); ++k) {
    EXPECT_EQ(order[k].forward ? order[k].chunk + 1 : -(order[k].chunk + 1),
              expected[k])
        << k;
  }
}

// Both programs of every stage: m (1F1B) or m*v (interleaved) computes of
// each direction with per-type seq_ids 0.., p2p ops where the schedule needs
// them, one AG / RS per chunk with DP, and the post-compute chain.
TEST(MegatronScheduleTest, OpCountsPerType) {
  for (auto [p, m, v] : {std::tuple{4, 8, 2}, {2, 4, 3}, {1, 3, 2}}) {
    for (bool dp : {false, true}) {
      for (int32_t s = 0; s < p; ++s) {
        const bool end = s == 0 || s == p - 1;
        const auto a = CountByType(OneFOneBProgram(s, p, m, dp));
        EXPECT_EQ(Count(a, OpType::kForwardCompute), m);
        EXPECT_EQ(Count(a, OpType::kBackwardCompute), m);
        EXPECT_EQ(Count(a, OpType::kForwardRecv), s > 0 ? m : 0);
        EXPECT_EQ(Count(a, OpType::kBackwardSend), s > 0 ? m : 0);
        EXPECT_EQ(Count(a, OpType::kForwardSend), s < p - 1 ? m : 0);
        EXPECT_EQ(Count(a, OpType::kBackwardRecv), s < p - 1 ? m : 0);
        EXPECT_EQ(Count(a, OpType::kParamsAllGather), dp ? 1 : 0);
        EXPECT_EQ(Count(a, OpType::kGradsReduceScatter), dp ? 1 : 0);
        EXPECT_EQ(Count(a, OpType::kEmbeddingGradsAllReduce), end ? 1 : 0);

        const std::vector<ScheduledOp> prog =
            InterleavedProgram(s, p, m, v, dp);
        const auto b = CountByType(prog);
        for (OpType t : {OpType::kForwardCompute, OpType::kBackwardCompute,
                         OpType::kForwardRecv, OpType::kForwardSend,
                         OpType::kBackwardRecv, OpType::kBackwardSend}) {
          EXPECT_EQ(Count(b, t), m * v) << trace::OpTypeName(t);
        }
        EXPECT_EQ(Count(b, OpType::kParamsAllGather), dp ? v : 0);
        EXPECT_EQ(Count(b, OpType::kGradsReduceScatter), dp ? v : 0);
        EXPECT_EQ(Count(b, OpType::kEmbeddingGradsAllReduce), end ? 1 : 0);
        for (OpType t : {OpType::kGc, OpType::kLayernormGradsAllReduce,
                         OpType::kOptimizerClipMainGrad, OpType::kOptimizer}) {
          EXPECT_EQ(Count(b, t), 1) << trace::OpTypeName(t);
        }
        EXPECT_EQ(prog.back().type, OpType::kOptimizer);
        // seq_id is the running index per type; each (microbatch, chunk)
        // runs once forward and once backward.
        std::array<int32_t, trace::kNumOpTypes> next{};
        std::vector<int32_t> seen(static_cast<size_t>(2 * m * v), 0);
        for (const ScheduledOp& op : prog) {
          EXPECT_EQ(op.seq_id, next[static_cast<size_t>(op.type)]++);
          if (!trace::IsCompute(op.type)) continue;
          const bool fwd = op.type == OpType::kForwardCompute;
          ++seen[static_cast<size_t>(((fwd ? 0 : m) + op.microbatch) * v +
                                     op.chunk)];
        }
        for (int32_t n : seen) EXPECT_EQ(n, 1);
      }
    }
  }
}

// Every interleaved compute sits between its recv and its send (same
// microbatch), and pairing by rank among valid p2p ops (whatif-spec.md §3.3)
// joins the same microbatch on global chunks gmc -> gmc + 1 (forward) and
// gmc -> gmc - 1 (backward), wrapping from the last stage to stage 0.
TEST(MegatronScheduleTest, InterleavedP2pPairsAdjacentChunks) {
  for (auto [p, m, v] : {std::tuple{4, 8, 2}, {2, 6, 3}, {4, 6, 2}}) {
    // Per stage and p2p type: (microbatch, gmc) of the compute of each
    // valid op, in program order.
    using Ends = std::vector<std::pair<int32_t, int32_t>>;
    std::vector<std::array<Ends, trace::kNumOpTypes>> valid(
        static_cast<size_t>(p));
    for (int32_t s = 0; s < p; ++s) {
      const std::vector<ScheduledOp> prog =
          InterleavedProgram(s, p, m, v, true);
      for (size_t k = 0; k < prog.size(); ++k) {
        if (!trace::IsCompute(prog[k].type)) continue;
        const bool fwd = prog[k].type == OpType::kForwardCompute;
        ASSERT_TRUE(k >= 1 && k + 1 < prog.size());
        const ScheduledOp &recv = prog[k - 1], &send = prog[k + 1];
        EXPECT_EQ(recv.type,
                  fwd ? OpType::kForwardRecv : OpType::kBackwardRecv);
        EXPECT_EQ(send.type,
                  fwd ? OpType::kForwardSend : OpType::kBackwardSend);
        EXPECT_EQ(recv.microbatch, prog[k].microbatch);
        EXPECT_EQ(send.microbatch, prog[k].microbatch);
        const int32_t gmc = prog[k].chunk * p + s;
        const int32_t up = fwd ? gmc - 1 : gmc + 1;  // where the input is
        const int32_t down = fwd ? gmc + 1 : gmc - 1;
        const std::pair<int32_t, int32_t> me{prog[k].microbatch, gmc};
        if (up >= 0 && up < p * v) {
          valid[static_cast<size_t>(s)][static_cast<size_t>(recv.type)]
              .push_back(me);
        }
        if (down >= 0 && down < p * v) {
          valid[static_cast<size_t>(s)][static_cast<size_t>(send.type)]
              .push_back(me);
        }
      }
    }
    for (int32_t s = 0; s < p; ++s) {
      for (auto [send, recv, peer, delta] :
           {std::tuple{OpType::kForwardSend, OpType::kForwardRecv, (s + 1) % p,
                       1},
            {OpType::kBackwardSend, OpType::kBackwardRecv, (s - 1 + p) % p,
             -1}}) {
        const Ends& mine =
            valid[static_cast<size_t>(s)][static_cast<size_t>(send)];
        const Ends& theirs =
            valid[static_cast<size_t>(peer)][static_cast<size_t>(recv)];
        ASSERT_EQ(mine.size(), theirs.size());
        for (size_t j = 0; j < mine.size(); ++j) {
          EXPECT_EQ(theirs[j].first, mine[j].first) << s << " " << j;
          EXPECT_EQ(theirs[j].second, mine[j].second + delta) << s << " " << j;
        }
      }
    }
  }
}


// Deterministic interleaved 1F1B, zero communication: the step takes
// m (t_f + t_b) + (p - 1)(t_f + t_b) / v (whatif-method.md §4.1) and S = 1;
// v = 1 (the plain 1F1B program) gives (m + p - 1)(t_f + t_b).
TEST(MegatronScheduleTest, InterleavedClosedForm) {
  const double t_f = 1.0 / 32, t_b = 1.0 / 16;
  for (auto [p, m, v] : {std::tuple{2, 4, 2},
                         {4, 8, 2},
                         {4, 16, 4},
                         {8, 16, 2},
                         {4, 8, 1},
                         {8, 16, 1}}) {
    SynthJob job{
        .dp = 2, .pp = p, .vpp = v, .microbatches = m, .steps = {0, 1}};
    auto table = SynthesizeTrace(job, ComputeOnly(t_f, t_b, v));
    ASSERT_TRUE(table.ok()) << table.status().message();
    const whatif::WhatIfResult r = AnalyzeTable(*table);
    EXPECT_EQ(r.vpp, v);
    const double expected = m * (t_f + t_b) + (p - 1) * (t_f + t_b) / v;
    ASSERT_EQ(r.step_t_replayed.size(), 2u);
    for (double t : r.step_t_replayed) {
      EXPECT_NEAR(t, expected, 1e-9) << p << "," << m << "," << v;
    }
    EXPECT_NEAR(r.slowdown, 1.0, 1e-9) << p << "," << m << "," << v;
    EXPECT_LT(r.self_test_max_error_s, 1e-9);
  }
}

// m not a multiple of p (short last group) or below p (all warm-up): the
// order still replays without a dependency cycle and nothing straggles; the
// textbook bubble is only a lower bound there (Megatron assumes p | m).
TEST(MegatronScheduleTest, InterleavedShortGroupsReplay) {
  const double t_f = 1.0 / 32, t_b = 1.0 / 16;
  for (auto [p, m, v] :
       {std::tuple{4, 6, 2}, {4, 2, 2}, {2, 3, 4}, {1, 3, 2}}) {
    SynthJob job{.dp = 2, .pp = p, .vpp = v, .microbatches = m, .steps = {0}};
    auto table = SynthesizeTrace(job, ComputeOnly(t_f, t_b, v));
    ASSERT_TRUE(table.ok()) << table.status().message();
    const whatif::WhatIfResult r = AnalyzeTable(*table);
    const double bound = m * (t_f + t_b) + (p - 1) * (t_f + t_b) / v;
    EXPECT_GE(r.step_t_replayed[0], bound - 1e-9) << p << "," << m << "," << v;
    EXPECT_NEAR(r.slowdown, 1.0, 1e-9) << p << "," << m << "," << v;
  }
}

// Interleaved job (p 4, v 2, m 8, dp 4), worker (dp 1, stage 2) computing
// 50% slower: it is the worst worker and fixing it recovers most of S - 1.
TEST(MegatronScheduleTest, InterleavedFindsTheSlowWorker) {
  SynthJob job{
      .dp = 4, .pp = 4, .vpp = 2, .microbatches = 8, .steps = {10, 11, 12}};
  const int32_t slow_dp = 1, slow_stage = 2;
  auto table = SynthesizeTrace(job, [&](const SynthOp& op) {
    double t = ComputeOnly(0.010, 0.020, job.vpp)(op);
    if (op.dp == slow_dp && op.stage == slow_stage) t *= 1.5;
    if (op.type == OpType::kForwardSend || op.type == OpType::kForwardRecv) {
      t = 0.0002;
    }
    return t;
  });
  ASSERT_TRUE(table.ok()) << table.status().message();
  const int32_t slow_rank = slow_stage * job.dp + slow_dp;
  const whatif::WhatIfResult r = AnalyzeTable(*table);
  EXPECT_EQ(r.vpp, 2);
  EXPECT_GT(r.slowdown, 1.1);
  ASSERT_FALSE(r.workers.empty());
  EXPECT_EQ(r.workers[0].rank, slow_rank);
  EXPECT_EQ(r.fix_worst_workers.ranks, std::vector<int32_t>{slow_rank});
  EXPECT_GT(r.fix_worst_workers.rem, 0.5);
}

}  // namespace
}  // namespace strag::sim
