// SPDX-License-Identifier: Apache-2.0
// Kernel detail end to end (issue 14): a simulated job exported as per-rank
// Kineto traces, one kernel type slowed on one rank (the simulator's
// slow_worker with `op: backward`: the backward GEMM), read back and
// analysed: the top excess op of that rank is that kernel, and the top
// excess CPU op the one that launches it (aten::mm, the exporter's cpu_op
// around each launch); in a healthy job no op stands out.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/kineto_writer.h"
#include "report/profiler_input.h"
#include "report/render/analysis_json.h"
#include "report/render/terminal_summary.h"
#include "report/report.h"
#include "sim/clock_offsets.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"

namespace strag::report {
namespace {

// The kernel of every backward op (kernels_per_compute 1), and the forward.
// Factor 2: the diagnosis names the rank (M_W 0.8) on this small job.
constexpr char kBackwardGemm[] =
    "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nt";
constexpr char kForwardGemm[] =
    "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn";

constexpr char kSpec[] = R"(
job: {dp: 4, pp: 2, microbatches: 4, steps: 6, seed: 11}
compute: {forward_ms: 4, backward_ms: 8, noise: {dist: lognormal, sigma: 0.02}}
comm: {p2p_ms: 0.2, dp_allgather_ms: 2, dp_reducescatter_ms: 3, noise: {dist: lognormal, sigma: 0}}
)";

// The job of `spec` as read back from its Kineto export.
ReportInput SimulatedKinetoJob(const std::string& spec) {
  auto parsed = sim::ParseJobSpec(spec, "spec.yaml");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  auto job = sim::Simulate(*parsed);
  EXPECT_TRUE(job.ok()) << job.status().message();
  const trace::OpsTable table =
      sim::ToOpsTable(*job, 0, static_cast<int64_t>(job->steps.size()) - 1);
  const trace::JobMeta meta = sim::MetaOf(*job);
  ingest::KinetoExportOptions options;
  const size_t exported_ranks =
      static_cast<size_t>(meta.dp) * static_cast<size_t>(meta.pp);
  options.clock_offset_ns = sim::DrawClockOffsets(3, exported_ranks, 2.0);
  auto exported = ingest::KinetoExport::Build(table, meta, options);
  EXPECT_TRUE(exported.ok()) << exported.status().message();
  std::vector<std::optional<trace::RankTrace>> read;
  for (const ingest::KinetoWorker& w : exported->workers()) {
    std::string text;
    exported->Render(w.rank, &text);
    const std::string name =
        "rank-" + std::to_string(w.rank) + ".pt.trace.json";
    auto t = ingest::ParseKinetoTrace(text, name);
    EXPECT_TRUE(t.ok()) << t.status().message();
    read.push_back(std::move(t).value());
  }
  ProfilerInputOptions in_options;
  in_options.source = "simulated";
  auto input = ProfilerInput(std::move(read), std::move(in_options));
  EXPECT_TRUE(input.ok()) << input.status().message();
  return std::move(input).value();
}

// The op of `d` with the largest excess, across its segments (of
// `launch_ops` when `by_cpu_op`).
const OpExcess* TopOp(const KernelDetail& d, bool by_cpu_op = false) {
  const OpExcess* top = nullptr;
  for (const SegmentExcess& s : d.segments) {
    for (const OpExcess& op : by_cpu_op ? s.launch_ops : s.ops) {
      if (top == nullptr || op.excess_s > top->excess_s) top = &op;
    }
  }
  return top;
}

TEST(KernelDetailSimTest, SlowedKernelTypeIsTheTopExcessOp) {
  ReportInput input = SimulatedKinetoJob(
      std::string(kSpec) +
      "stragglers:\n"
      "  - {kind: slow_worker, rank: 2, factor: 2.0, op: backward}\n");
  ASSERT_FALSE(input.segment_ops.empty());
  auto report = BuildReport(std::move(input), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->diagnosis.largest_straggler.rank, 2)
      << RenderTerminalSummary(*report);
  ASSERT_FALSE(report->kernel_detail.empty());
  const KernelDetail& d = report->kernel_detail.front();
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.peers, 3);  // the other ranks of stage 0
  EXPECT_FALSE(d.cpu_ops);
  const OpExcess* top = TopOp(d);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->name, kBackwardGemm);
  EXPECT_GT(top->ratio, 1.9);
  EXPECT_LT(top->ratio, 2.1);
  ASSERT_FALSE(d.ops.empty());  // over all its segments, too
  EXPECT_EQ(d.ops.front().name, kBackwardGemm);
  EXPECT_EQ(d.ops.front().count, d.ops.front().median_count);
  // The forward GEMM, not slowed, is within the noise.
  for (const SegmentExcess& s : d.segments) {
    for (const OpExcess& op : s.ops) {
      if (op.name == kForwardGemm) {
        EXPECT_LT(op.ratio, 1.05);
      }
    }
  }
  // By CPU op: aten::mm, which launches the backward GEMM (and nothing
  // else), is the top excess op; aten::linear (the forward) is not slower.
  const OpExcess* top_op = TopOp(d, true);
  ASSERT_NE(top_op, nullptr);
  EXPECT_EQ(top_op->name, "aten::mm");
  EXPECT_GT(top_op->ratio, 1.9);
  ASSERT_EQ(top_op->kernels.size(), 1u);
  EXPECT_EQ(top_op->kernels[0].name, kBackwardGemm);
  EXPECT_EQ(top_op->kernels[0].count, top_op->count);
  ASSERT_FALSE(d.launch_ops.empty());
  EXPECT_EQ(d.launch_ops.front().name, "aten::mm");
  for (const OpExcess& op : d.launch_ops) {
    EXPECT_FALSE(op.kernels.empty()) << op.name;  // every launch in an op
    if (op.name == "aten::linear") {
      EXPECT_LT(op.ratio, 1.05);
      ASSERT_EQ(op.kernels.size(), 1u);
      EXPECT_EQ(op.kernels[0].name, kForwardGemm);
    }
  }
  const std::string text = RenderTerminalSummary(*report);
  EXPECT_NE(text.find("why rank 2 is slow"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2, compute #"), std::string::npos) << text;
  EXPECT_NE(text.find("ampere_bf16_s16816gemm_bf16_128x256"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 2, all compute: aten::mm +"), std::string::npos)
      << text;
  const std::string json = RenderAnalysisJson(*report);
  EXPECT_NE(json.find("\"kernel_detail\""), std::string::npos);
  EXPECT_NE(json.find(kBackwardGemm), std::string::npos);
  EXPECT_NE(json.find("\"launch_ops\""), std::string::npos);
}

TEST(KernelDetailSimTest, HealthyJobHasNoStandOutOp) {
  const ReportInput input = SimulatedKinetoJob(kSpec);
  const std::vector<int32_t> ranks = {0, 1, 2, 3};
  const std::vector<KernelDetail> detail =
      ExplainRanks(input.segment_ops, input.prepared.topology, ranks);
  ASSERT_EQ(detail.size(), 4u);  // each has 3 peers in its stage
  for (const KernelDetail& d : detail) {
    for (const bool by_cpu_op : {false, true}) {
      const OpExcess* top = TopOp(d, by_cpu_op);
      ASSERT_NE(top, nullptr);
      EXPECT_LT(top->ratio, 1.1) << "rank " << d.rank << ": " << top->name;
    }
  }
  auto report = BuildReport(input, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->kernel_detail.empty());  // no straggler named
}

}  // namespace
}  // namespace strag::report
