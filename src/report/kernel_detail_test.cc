// SPDX-License-Identifier: Apache-2.0
#include "report/kernel_detail.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/json_writer.h"
#include "report/render/kernel_detail_html.h"
#include "report/render/kernel_detail_json.h"
#include "report/render/kernel_detail_text.h"

namespace strag::report {
namespace {

using graph::LocalSegmentOps;
using graph::OpTotal;

// `ranks` ranks with two compute segments each, `steps` steps. Segment 0:
// aten::mm (4 x 1 ms) and aten::add (2 x 0.5 ms); segment 1: aten::bmm
// (2 x 2 ms). `scale(rank, name)` scales a name's total on a rank.
template <typename Scale>
graph::SegmentOps MakeOps(int32_t ranks, int64_t steps, Scale scale) {
  std::vector<trace::RankTrace> traces(static_cast<size_t>(ranks));
  graph::SegmentOpsBuilder b;
  for (int32_t r = 0; r < ranks; ++r) {
    trace::RankTrace& t = traces[static_cast<size_t>(r)];
    t.rank = r;
    // Names interned in another order on odd ranks: ids differ per trace.
    t.names =
        r % 2 ? std::vector<std::string>{"aten::bmm", "aten::add", "aten::mm"}
              : std::vector<std::string>{"aten::mm", "aten::add", "aten::bmm"};
    b.AddRank(t, 2);
  }
  for (int64_t s = 0; s < steps; ++s) {
    for (int32_t r = 0; r < ranks; ++r) {
      const trace::RankTrace& t = traces[static_cast<size_t>(r)];
      auto id = [&](const std::string& name) {
        return static_cast<uint32_t>(
            std::find(t.names.begin(), t.names.end(), name) - t.names.begin());
      };
      auto total = [&](const std::string& name, int64_t ns) {
        return static_cast<int64_t>(static_cast<double>(ns) * scale(r, name));
      };
      LocalSegmentOps local;
      local.totals = {{id("aten::mm"), 4, total("aten::mm", 4'000'000)},
                      {id("aten::add"), 2, total("aten::add", 1'000'000)},
                      {id("aten::bmm"), 2, total("aten::bmm", 4'000'000)}};
      local.offsets = {0, 2, 3};
      b.Add(static_cast<size_t>(r), s, local);
    }
  }
  return b.Take();
}

trace::Topology OneStage(int32_t ranks) {
  trace::Topology t;
  for (int32_t r = 0; r < ranks; ++r) t.places.push_back({.rank = r, .dp = r});
  return t;
}

TEST(KernelDetailTest, TopExcessIsTheSlowedOp) {
  const graph::SegmentOps ops =
      MakeOps(5, 4, [](int32_t r, const std::string& name) {
        if (r == 2 && name == "aten::mm") return 1.4;
        return 1.0 + 0.01 * r;  // a little spread among the peers
      });
  const std::vector<int32_t> ranks = {2};
  const auto detail = ExplainRanks(ops, OneStage(5), ranks);
  ASSERT_EQ(detail.size(), 1u);
  const KernelDetail& d = detail[0];
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.peers, 4);
  EXPECT_EQ(d.median_rank, 1);  // peers 0, 1, 3, 4: lower median is 1
  EXPECT_EQ(d.steps.size(), kKernelDetailSteps);
  EXPECT_FALSE(d.cpu_ops);
  ASSERT_FALSE(d.segments.empty());
  const SegmentExcess& s = d.segments[0];
  EXPECT_EQ(s.segment, 0);
  ASSERT_EQ(s.ops.size(), 2u);
  const OpExcess& top = s.ops[0];
  EXPECT_EQ(top.name, "aten::mm");
  EXPECT_EQ(top.count, 12);  // 4 per step, 3 steps
  EXPECT_EQ(top.median_count, 12);
  EXPECT_NEAR(top.total_s, 3 * 4e-3 * 1.4, 1e-9);
  EXPECT_NEAR(top.median_total_s, 3 * 4e-3 * 1.01, 1e-9);
  EXPECT_NEAR(top.excess_s, top.total_s - top.median_total_s, 1e-12);
  EXPECT_NEAR(top.ratio, 1.4 / 1.01, 1e-6);
  EXPECT_NEAR(s.excess_s, top.excess_s + s.ops[1].excess_s, 1e-12);
}

TEST(KernelDetailTest, PeersAreTheRanksOfTheSameStage) {
  // Ranks 0-2 stage 0, ranks 3-5 stage 1 (twice the work): rank 4 is
  // compared with ranks 3 and 5 only.
  const graph::SegmentOps ops =
      MakeOps(6, 2, [](int32_t r, const std::string& name) {
        const double stage = r >= 3 ? 2.0 : 1.0;
        return stage * (r == 4 && name == "aten::bmm" ? 1.5 : 1.0);
      });
  trace::Topology topology;
  for (int32_t r = 0; r < 6; ++r) {
    topology.places.push_back({.rank = r, .dp = r % 3, .pp = r / 3});
  }
  const std::vector<int32_t> ranks = {4, 9};  // 9 is not traced: skipped
  const auto detail = ExplainRanks(ops, topology, ranks);
  ASSERT_EQ(detail.size(), 1u);
  EXPECT_EQ(detail[0].peers, 2);
  EXPECT_EQ(detail[0].median_rank, 3);
  ASSERT_EQ(detail[0].segments.size(), 1u);  // only segment 1 is slower
  EXPECT_EQ(detail[0].segments[0].segment, 1);
  EXPECT_EQ(detail[0].segments[0].ops[0].name, "aten::bmm");
  EXPECT_NEAR(detail[0].segments[0].ops[0].ratio, 1.5, 1e-9);
}

TEST(KernelDetailTest, HealthyRankHasNoExcess) {
  const graph::SegmentOps ops =
      MakeOps(4, 3, [](int32_t, const std::string&) { return 1.0; });
  const std::vector<int32_t> ranks = {0};
  const auto detail = ExplainRanks(ops, OneStage(4), ranks);
  ASSERT_EQ(detail.size(), 1u);
  EXPECT_EQ(detail[0].steps.size(), 1u);  // no step with an excess: one
  EXPECT_EQ(detail[0].excess_s, 0);
  for (const SegmentExcess& s : detail[0].segments) {
    for (const OpExcess& op : s.ops) EXPECT_EQ(op.excess_s, 0) << op.name;
  }
}

// 4 ranks, one segment, 2 steps: gemm_a (2 x 1 ms) and gemm_b (1 x 1 ms)
// launched by aten::mm, add_k (1 x 1 ms) by aten::add, loose (1 x 1 ms)
// outside any CPU op; gemm_a 1.5x slower on rank 2.
graph::SegmentOps LaunchedOps(bool median_names_ops = true) {
  std::vector<trace::RankTrace> traces(4);
  graph::SegmentOpsBuilder b;
  for (int32_t r = 0; r < 4; ++r) {
    trace::RankTrace& t = traces[static_cast<size_t>(r)];
    t.rank = r;
    t.names = {"gemm_a", "gemm_b", "add_k", "loose", "aten::mm", "aten::add"};
    b.AddRank(t, 1);
  }
  for (int64_t s = 0; s < 2; ++s) {
    for (int32_t r = 0; r < 4; ++r) {
      const int64_t a = r == 2 ? 3'000'000 : 2'000'000;
      // Without median_names_ops only rank 2's trace names launching ops.
      const bool named = median_names_ops || r == 2;
      const uint32_t mm = named ? 4 : graph::kNoLaunchOp;
      const uint32_t add = named ? 5 : graph::kNoLaunchOp;
      LocalSegmentOps local;
      local.totals = {{0, 2, a, mm},
                      {1, 1, 1'000'000, mm},
                      {2, 1, 1'000'000, add},
                      {3, 1, 1'000'000, graph::kNoLaunchOp}};
      local.offsets = {0, 4};
      b.Add(static_cast<size_t>(r), s, local);
    }
  }
  return b.Take();
}

TEST(KernelDetailTest, KernelsGroupedByTheirLaunchingCpuOp) {
  const graph::SegmentOps ops = LaunchedOps();
  const std::vector<int32_t> ranks = {2};
  const auto detail = ExplainRanks(ops, OneStage(4), ranks);
  ASSERT_EQ(detail.size(), 1u);
  const KernelDetail& d = detail[0];
  ASSERT_EQ(d.ops.size(), 4u);  // per kernel, as without CPU ops
  EXPECT_EQ(d.ops[0].name, "gemm_a");
  ASSERT_EQ(d.launch_ops.size(), 3u);
  const OpExcess& mm = d.launch_ops[0];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_EQ(mm.count, 6);  // kernels: 3 per step, 2 steps
  EXPECT_NEAR(mm.excess_s, 2e-3, 1e-12);
  EXPECT_NEAR(mm.ratio, 8.0 / 6.0, 1e-9);
  ASSERT_EQ(mm.kernels.size(), 2u);
  EXPECT_EQ(mm.kernels[0].name, "gemm_a");
  EXPECT_NEAR(mm.kernels[0].ratio, 1.5, 1e-9);
  EXPECT_EQ(mm.kernels[1].name, "gemm_b");
  // aten::add and the kernel launched outside any op (no kernels list).
  for (size_t i = 1; i < 3; ++i) {
    const OpExcess& op = d.launch_ops[i];
    EXPECT_EQ(op.kernels.empty(), op.name == "loose") << op.name;
  }
  ASSERT_EQ(d.segments.size(), 1u);
  ASSERT_EQ(d.segments[0].launch_ops.size(), 3u);
  EXPECT_EQ(d.segments[0].launch_ops[0].name, "aten::mm");

  const std::string text = KernelDetailText(detail, "");
  EXPECT_NE(text.find("rank 2, compute #0: aten::mm +2.0 ms (1.33x; 6 "
                      "kernels: gemm_a, gemm_b)"),
            std::string::npos)
      << text;
  const std::string html = KernelDetailHtmlSection(detail);
  EXPECT_NE(html.find("<th>CPU op</th><th>kernels</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>aten::mm</td><td>gemm_a &times;4<br>gemm_b"),
            std::string::npos)
      << html;
  JsonWriter w;
  w.BeginObject();
  WriteKernelDetail(&w, detail);
  w.EndObject();
  EXPECT_NE(w.str().find("\"launch_ops\""), std::string::npos);
  EXPECT_NE(w.str().find("\"cpu_op\": true"), std::string::npos) << w.str();
}

// The rank's trace names the launching ops, its peers' do not: kernels are
// paired by name under the rank's ops, so the excess is the same as with
// both named (no false "+8 ms, not on the median rank").
TEST(KernelDetailTest, KernelsPairedWhenOnlyTheRankNamesItsOps) {
  const std::vector<int32_t> ranks = {2};
  const auto both = ExplainRanks(LaunchedOps(), OneStage(4), ranks);
  const auto one = ExplainRanks(LaunchedOps(false), OneStage(4), ranks);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(one[0].launch_ops.size(), both[0].launch_ops.size());
  for (size_t i = 0; i < one[0].launch_ops.size(); ++i) {
    const OpExcess& a = one[0].launch_ops[i];
    const OpExcess& b = both[0].launch_ops[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.median_count, b.median_count) << a.name;
    EXPECT_NEAR(a.excess_s, b.excess_s, 1e-12) << a.name;
    EXPECT_NEAR(a.ratio, b.ratio, 1e-12) << a.name;
  }
  EXPECT_NEAR(one[0].launch_ops[0].excess_s, 2e-3, 1e-12);
}

TEST(KernelDetailTest, NoLaunchOpsWithoutCpuOps) {
  const graph::SegmentOps ops =
      MakeOps(4, 2, [](int32_t r, const std::string& name) {
        return r == 1 && name == "aten::mm" ? 1.5 : 1.0;
      });
  const std::vector<int32_t> ranks = {1};
  const auto detail = ExplainRanks(ops, OneStage(4), ranks);
  ASSERT_EQ(detail.size(), 1u);
  EXPECT_TRUE(detail[0].launch_ops.empty());
  for (const SegmentExcess& s : detail[0].segments) {
    EXPECT_TRUE(s.launch_ops.empty());
  }
}

TEST(KernelDetailTest, RanksToExplainAreTheNamedStragglers) {
  diagnose::Diagnosis d;
  EXPECT_TRUE(RanksToExplain(d).empty());  // none named
  d.largest_straggler.rank = 5;
  for (std::vector<int32_t> ranks : {std::vector<int32_t>{5, 6}, {7}, {}}) {
    d.findings.emplace_back();
    d.findings.back().ranks = ranks;
  }
  EXPECT_EQ(RanksToExplain(d), (std::vector<int32_t>{5, 7}));
}

}  // namespace
}  // namespace strag::report
