// SPDX-License-Identifier: Apache-2.0
// Synthesised Megatron jobs through the whole what-if pipeline: closed forms
// of 1F1B, the replay self-test, and a known straggler found.

#include "sim/trace_synth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim/synth_test_util.h"
#include "whatif/analysis.h"
#include "whatif/timeline.h"
#include "whatif/prepared_trace.h"

namespace strag::sim {
namespace {

using trace::OpType;

// Deterministic 1F1B with zero communication: the step takes exactly
// (m + p - 1)(t_f + t_b) (whatif-method.md §4.1), and nothing straggles.
TEST(TraceSynthTest, OneFOneBClosedForm) {
  const double t_f = 0.010, t_b = 0.020;
  for (auto [p, m] : {std::pair{4, 8}, {4, 4}, {8, 32}, {2, 3}}) {
    SynthJob job{.dp = 2, .pp = p, .microbatches = m, .steps = {0, 1}};
    auto table = SynthesizeTrace(job, ComputeOnly(t_f, t_b));
    ASSERT_TRUE(table.ok()) << table.status().message();
    const whatif::WhatIfResult r = AnalyzeTable(*table);
    const double expected = (m + p - 1) * (t_f + t_b);
    for (double t : r.step_t_replayed)
      EXPECT_NEAR(t, expected, 1e-6) << p << "," << m;
    EXPECT_NEAR(r.step_t_ideal[0], expected, 1e-6);
    EXPECT_NEAR(r.slowdown, 1.0, 1e-6);
    EXPECT_LT(r.self_test_max_error_s, 1e-6);
  }
}

// One worker (dp 1, stage 2) computing 50% slower: it is the worst worker,
// fixing it alone recovers most of the loss (M_W > 0.5), and the explicit
// selector rank=<its rank> agrees with M_W.
TEST(TraceSynthTest, FindsTheSlowWorker) {
  SynthJob job{.dp = 4, .pp = 4, .microbatches = 8, .steps = {10, 11, 12}};
  const int32_t slow_dp = 1, slow_stage = 2;
  auto table = SynthesizeTrace(job, [&](const SynthOp& op) {
    double t = ComputeOnly(0.010, 0.020)(op);
    if (op.dp == slow_dp && op.stage == slow_stage) t *= 1.5;
    if (op.type == OpType::kForwardSend || op.type == OpType::kForwardRecv) {
      t = 0.0002;
    }
    return t;
  });
  ASSERT_TRUE(table.ok());
  const int32_t slow_rank = slow_stage * job.dp + slow_dp;
  whatif::WhatIfOptions options;
  options.fix = {"rank=" + std::to_string(slow_rank), "stage=0+1+2+3"};
  options.unfix = {"optype=backward-compute,dp=1"};
  const whatif::WhatIfResult r = AnalyzeTable(*table, options);
  EXPECT_GT(r.slowdown, 1.1);
  ASSERT_FALSE(r.workers.empty());
  EXPECT_EQ(r.workers[0].rank, slow_rank);
  EXPECT_EQ(r.fix_worst_workers.ranks, std::vector<int32_t>{slow_rank});
  EXPECT_GT(r.fix_worst_workers.rem, 0.5);
  ASSERT_EQ(r.selected.size(), 3u);
  EXPECT_DOUBLE_EQ(r.selected[0].rem, r.fix_worst_workers.rem);
  // Fixing every stage is fixing everything.
  EXPECT_NEAR(r.selected[1].rem, 1.0, 1e-9);
  EXPECT_NEAR(r.selected[1].add, 1.0, 1e-9);
  EXPECT_TRUE(r.selected[2].unfix);
  EXPECT_GT(r.selected[2].add, 0.3);
}

// Host pauses (launch delays) of up to 20 ms before some forwards: the
// published preprocessing recovers them, the replay with them reproduces the
// traced timestamps (the self-test), and T without them is shorter than the
// observed step time (launch slowdown > 1) while S stays at 1.
TEST(TraceSynthTest, LaunchDelaysAreRecovered) {
  SynthJob job{.dp = 2, .pp = 4, .microbatches = 4, .steps = {0, 1, 2}};
  auto delay = [](const SynthOp& op) {
    if (op.type != OpType::kForwardCompute) return 0.0;
    return 0.001 * static_cast<double>(
                       (op.step * 7 + op.dp * 3 + op.stage + op.seq_id) % 21);
  };
  auto table = SynthesizeTrace(job, ComputeOnly(0.010, 0.020), delay);
  ASSERT_TRUE(table.ok());
  auto prepared = whatif::PrepareTrace(*table, trace::JobMeta{});
  ASSERT_TRUE(prepared.ok());
  double max_error = 0;
  for (graph::NodeId v = 0; v < prepared->num_nodes(); ++v) {
    for (size_t i = 0; i < prepared->num_instances(); ++i) {
      const size_t slot = prepared->Slot(v, i);
      const uint32_t row = prepared->row[slot];
      const SynthOp op{table->step[row],
                       table->dp[row],
                       table->pp[row],
                       table->op_type[row],
                       table->seq_id[row],
                       -1,
                       -1};
      max_error = std::max(max_error,
                           std::abs(prepared->launch_delay[slot] - delay(op)));
    }
  }
  EXPECT_LT(max_error, 1e-6);
  const whatif::WhatIfResult r = AnalyzeTable(*table);
  EXPECT_LT(r.self_test_max_error_s, 1e-6);
  EXPECT_GT(r.launch_slowdown, 1.01);
  EXPECT_NEAR(r.slowdown, 1.0, 1e-6);
}

// The timeline of a step: every op of every worker, the actual step time
// and the ideal one of the analysis, and a critical path from the last
// optimizer back to a root that runs through the slow worker's computes.
TEST(TraceSynthTest, TimelineHasTheCriticalPath) {
  SynthJob job{.dp = 2, .pp = 4, .microbatches = 4, .steps = {0, 1}};
  auto table = SynthesizeTrace(job, [](const SynthOp& op) {
    double t = ComputeOnly(0.010, 0.020)(op);
    if (op.dp == 1 && op.stage == 2) t *= 1.5;
    return t;
  });
  ASSERT_TRUE(table.ok());
  auto prepared = whatif::PrepareTrace(*table, trace::JobMeta{});
  ASSERT_TRUE(prepared.ok());
  const whatif::WhatIfResult r = AnalyzeTable(*table);
  auto tl = whatif::BuildTimeline(*prepared, 1, r.ideal_node_cost);
  ASSERT_TRUE(tl.ok()) << tl.status().message();
  EXPECT_EQ(tl->step, 1);
  EXPECT_EQ(tl->ops.size(), prepared->num_nodes() * 2);
  EXPECT_NEAR(tl->step_time_s, r.step_t_replayed[1], 1e-9);
  EXPECT_NEAR(tl->ideal_step_time_s, r.step_t_ideal[1], 1e-9);
  size_t on_path = 0, slow_on_path = 0;
  for (const whatif::TimelineOp& op : tl->ops) {
    EXPECT_LT(op.waited_for, static_cast<int64_t>(tl->ops.size()));
    EXPECT_LE(op.start_s, op.end_s + 1e-12);
    if (!op.on_critical_path) continue;
    ++on_path;
    slow_on_path += op.dp == 1 && op.pp == 2 && trace::IsCompute(op.type);
  }
  EXPECT_GT(on_path, 5u);
  EXPECT_GT(slow_on_path, 2u);
}

// A bad selector is reported, naming the selector.
TEST(TraceSynthTest, BadSelectorIsAnError) {
  SynthJob job{.dp = 2, .pp = 2, .microbatches = 2, .steps = {0}};
  auto table = SynthesizeTrace(job, ComputeOnly(0.01, 0.02));
  ASSERT_TRUE(table.ok());
  auto prepared = whatif::PrepareTrace(*table, trace::JobMeta{});
  ASSERT_TRUE(prepared.ok());
  for (const char* bad : {"rank=99", "stage=7", "colour=red", "step=5", "dp",
                          "optype=warp-drive"}) {
    whatif::WhatIfOptions options;
    options.fix = {bad};
    auto result = whatif::Analyze(*prepared, options);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(result.status().message().find(bad), std::string::npos)
        << result.status().message();
  }
}

// Steps whose ops are missing on one DP rank cannot be replayed: the error
// names the step, DP rank and op.
TEST(TraceSynthTest, MissingOpNamesTheInstance) {
  SynthJob job{.dp = 2, .pp = 2, .microbatches = 2, .steps = {0, 1}};
  auto table = SynthesizeTrace(job, ComputeOnly(0.01, 0.02));
  ASSERT_TRUE(table.ok());
  trace::OpsTable t = *table;
  // Drop the last row (step 1, highest rank: dp 1 of stage 1).
  for (auto* col : {&t.rank, &t.dp, &t.pp, &t.seq_id, &t.chunk, &t.microbatch,
                    &t.global_chunk}) {
    col->pop_back();
  }
  t.step.pop_back();
  t.op_type.pop_back();
  t.start_ns.pop_back();
  t.dur_ns.pop_back();
  auto prepared = whatif::PrepareTrace(t, trace::JobMeta{});
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("step 1, dp rank 1 (rank 3)"),
            std::string::npos)
      << prepared.status().message();
}

}  // namespace
}  // namespace strag::sim
