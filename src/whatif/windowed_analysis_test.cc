// SPDX-License-Identifier: Apache-2.0
// AnalyzeWindows against Analyze: a job given a few steps at a time must
// give every result bit for bit (per-step series, means, decompositions,
// worker scores, counterfactuals, ideal values), for windows of any size,
// every ideal pool and user selections, on simulated jobs and on the
// published traces when the shared data is present.

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "base/thread_collective.h"
#include "graph/generic/generic_model.h"
#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/kineto_writer.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "whatif/analysis.h"
#include "whatif/prepared_generic.h"
#include "whatif/prepared_trace.h"
#include "whatif/published_traces_test_util.h"
#include "whatif/result_compare_test_util.h"

namespace strag::whatif {
namespace {

// The rows of `table` whose step is in [lo, hi].
trace::OpsTable RowsOfSteps(const trace::OpsTable& table, int64_t lo,
                            int64_t hi) {
  trace::OpsTable out;
  for (const trace::ExtraColumn& e : table.extra) {
    out.extra.emplace_back(e.name);
  }
  for (size_t r = 0; r < table.size(); ++r) {
    if (table.step[r] >= lo && table.step[r] <= hi) {
      out.AppendRows(table, r, r + 1);
    }
  }
  return out;
}

// Windows of `steps_per_window` steps of [lo, hi) (default: every step),
// each prepared from its own rows.
class TableWindows : public WindowSource {
 public:
  TableWindows(const trace::OpsTable& table, const PreparedTrace& shape,
               size_t steps_per_window, size_t lo = 0,
               size_t hi = SIZE_MAX)
      : table_(table), shape_(shape), size_(steps_per_window), lo_(lo),
        hi_(std::min(hi, shape.steps.size())) {}
  Status ForEachWindow(
      const std::function<Status(const PreparedTrace&)>& fn) override {
    for (size_t first = lo_; first < hi_; first += size_) {
      const size_t count = std::min(size_, hi_ - first);
      const trace::OpsTable rows =
          RowsOfSteps(table_, shape_.steps[first],
                      shape_.steps[first + count - 1]);
      ASSIGN_OR_RETURN(const PreparedTrace w,
                       PrepareWindow(shape_, rows, first, count));
      RETURN_IF_ERROR(fn(w));
    }
    return Status::Ok();
  }

 private:
  const trace::OpsTable& table_;
  const PreparedTrace& shape_;
  size_t size_, lo_, hi_;
};

void ExpectWindowsMatch(const trace::OpsTable& table,
                        const trace::JobMeta& meta,
                        const WhatIfOptions& options,
                        std::vector<size_t> window_sizes) {
  auto whole = PrepareTrace(table, meta);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  auto expected = Analyze(*whole, options);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  auto shape = PrepareShape(table, meta);
  ASSERT_TRUE(shape.ok()) << shape.status().message();
  for (size_t size : window_sizes) {
    SCOPED_TRACE("windows of " + std::to_string(size) + " steps");
    TableWindows windows(table, *shape, size);
    auto actual = AnalyzeWindows(*shape, &windows, options);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    ExpectSameResult(*actual, *expected);
  }
}

constexpr std::string_view kSimSpec = R"(
job: {dp: 4, pp: 4, tp: 2, microbatches: 8, steps: 11, gpus_per_node: 4}
compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.05}}
sequences: {dist: lognormal, median: 2048, sigma: 0.4, max: 16384,
            per_microbatch: 2, quadratic: 0.0002}
comm: {p2p_ms: 0.5, dp_allgather_ms: 3, dp_reducescatter_ms: 4,
       noise: {dist: lognormal, sigma: 0.05}}
stragglers:
  - {kind: slow_worker, rank: 5, factor: 1.5, steps: [3, 6]}
  - {kind: slow_link, node: 2, factor: 3.0}
  - {kind: gc_pause, ranks: all, rate_per_step: 0.1, pause_ms: 30}
)";

trace::OpsTable SimulatedTable(trace::JobMeta* meta) {
  auto spec = sim::ParseJobSpec(kSimSpec, "test.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  auto job = sim::Simulate(*spec, {.truth = false});
  EXPECT_TRUE(job.ok()) << job.status().message();
  *meta = sim::MetaOf(*job);
  return sim::ToOpsTable(*job, 0, job->spec.job.steps - 1);
}

TEST(AnalyzeWindowsTest, SimulatedJobAnyWindowSize) {
  trace::JobMeta meta;
  const trace::OpsTable table = SimulatedTable(&meta);
  ExpectWindowsMatch(table, meta, {}, {1, 2, 3, 4, 10, 11, 100});
}

TEST(AnalyzeWindowsTest, EveryPoolAndSelections) {
  trace::JobMeta meta;
  const trace::OpsTable table = SimulatedTable(&meta);
  for (IdealPool pool : {IdealPool::kOpTypeStage, IdealPool::kOp,
                         IdealPool::kPosition}) {
    SCOPED_TRACE(static_cast<int>(pool));
    WhatIfOptions options;
    options.pool = pool;
    ExpectWindowsMatch(table, meta, options, {3});
  }
  WhatIfOptions options;
  options.threads = 2;
  options.fix = {"rank=10", "stage=3,step=4", "step=0+10"};
  options.unfix = {"dp=2", "optype=forward-pp-comm"};
  ExpectWindowsMatch(table, meta, options, {1, 4});
}

TEST(AnalyzeWindowsTest, WindowsMustTileTheSteps) {
  trace::JobMeta meta;
  const trace::OpsTable table = SimulatedTable(&meta);
  auto shape = PrepareShape(table, meta);
  ASSERT_TRUE(shape.ok());
  // A source that skips the last window.
  class Short : public WindowSource {
   public:
    Short(const trace::OpsTable& t, const PreparedTrace& s) : t_(t), s_(s) {}
    Status ForEachWindow(
        const std::function<Status(const PreparedTrace&)>& fn) override {
      auto w = PrepareWindow(s_, RowsOfSteps(t_, 0, 4), 0, 5);
      if (!w.ok()) return w.status();
      return fn(*w);
    }
    const trace::OpsTable& t_;
    const PreparedTrace& s_;
  } windows(table, *shape);
  auto result = AnalyzeWindows(*shape, &windows, {});
  EXPECT_FALSE(result.ok());
  // A window given rows of another step.
  auto bad = PrepareWindow(*shape, RowsOfSteps(table, 0, 5), 0, 5);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("step 5"), std::string::npos);
}


// Analyze with a collective of `processes` threads, each given the whole
// prepared job (it replays its share) or, with `window_steps`, only the
// windows of its share: every process's result is the one-process result.
void ExpectSharedMatch(const PreparedTrace& whole, const WhatIfOptions& options,
                       size_t processes, const trace::OpsTable* table = nullptr,
                       const PreparedTrace* shape = nullptr,
                       size_t window_steps = 0) {
  auto expected = Analyze(whole, options);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  std::vector<Result<WhatIfResult>> got(processes, Internal("not run"));
  ThreadCollective::Run(processes, [&](Collective& c) {
    WhatIfOptions mine = options;
    mine.collective = &c;
    if (window_steps == 0) {
      got[c.rank()] = Analyze(whole, mine);
      return;
    }
    const Share s = ShareOf(shape->steps.size(), c.rank(), c.size());
    TableWindows windows(*table, *shape, window_steps, s.first, s.end);
    got[c.rank()] = AnalyzeWindows(*shape, &windows, mine);
  });
  for (size_t p = 0; p < processes; ++p) {
    SCOPED_TRACE("process " + std::to_string(p) + " of " +
                 std::to_string(processes));
    ASSERT_TRUE(got[p].ok()) << got[p].status().message();
    ExpectSameResult(*got[p], *expected);
    // Several windows on a process replay D_nd again in pass 3.
    if (window_steps == 0) {
      EXPECT_EQ(got[p]->replayed_ops, expected->replayed_ops);
    }
  }
}

TEST(SharedAnalysisTest, SimulatedJobOverProcesses) {
  trace::JobMeta meta;
  const trace::OpsTable table = SimulatedTable(&meta);
  auto whole = PrepareTrace(table, meta);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  for (size_t k : {2, 3, 4, 11}) ExpectSharedMatch(*whole, {}, k);
  WhatIfOptions options;
  options.threads = 1;
  options.pool = IdealPool::kOp;
  options.fix = {"rank=10", "stage=3,step=4"};
  options.unfix = {"dp=2"};
  ExpectSharedMatch(*whole, options, 3);
  // Each process streaming its share in windows.
  auto shape = PrepareShape(table, meta);
  ASSERT_TRUE(shape.ok());
  ExpectSharedMatch(*whole, {}, 3, &table, &*shape, 2);
}

// More processes than steps: Analyze runs alone on each (a one-step
// capture under mpirun); AnalyzeWindows, given shares, refuses.
TEST(SharedAnalysisTest, MoreProcessesThanSteps) {
  trace::JobMeta meta;
  const trace::OpsTable table = SimulatedTable(&meta);
  auto whole = PrepareTrace(table, meta);
  ASSERT_TRUE(whole.ok());
  ExpectSharedMatch(*whole, {}, 12);
  std::vector<Status> got(12);
  ThreadCollective::Run(12, [&](Collective& c) {
    WhatIfOptions mine;
    mine.collective = &c;
    WholeJob all(*whole);
    got[c.rank()] = AnalyzeWindows(*whole, &all, mine).status();
  });
  for (const Status& s : got) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
    EXPECT_NE(s.message().find("12 processes for a job of 11 steps"),
              std::string::npos)
        << s.message();
  }
}

// A profiler-trace job (Layout::kRanks) with the role pool, which screens
// every step of a stage at once: its costs are gathered whole.
TEST(SharedAnalysisTest, ProfilerLayoutAndRolePool) {
  auto spec = sim::ParseJobSpec(R"(
job: {dp: 2, pp: 2, microbatches: 4, steps: 6}
compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.1}}
comm: {p2p_ms: 0.5, dp_allgather_ms: 2, dp_reducescatter_ms: 3}
stragglers:
  - {kind: slow_worker, rank: 1, factor: 1.4}
)", "test.yaml");
  ASSERT_TRUE(spec.ok());
  auto job = sim::Simulate(*spec, {.truth = false});
  ASSERT_TRUE(job.ok());
  const trace::OpsTable table = sim::ToOpsTable(*job, 0, job->spec.job.steps - 1);
  auto exported = ingest::KinetoExport::Build(table, sim::MetaOf(*job), {});
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  std::vector<trace::RankTrace> ranks;
  for (size_t r = 0; r < exported->workers().size(); ++r) {
    std::string json;
    exported->Render(static_cast<int32_t>(r), &json);
    auto parsed = ingest::ParseKinetoTrace(json, "rank" + std::to_string(r));
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    ranks.push_back(std::move(parsed).value());
  }
  auto model = graph::BuildGenericModel(ranks);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto t = PrepareGenericTrace(std::move(model).value());
  ASSERT_TRUE(t.ok()) << t.status().message();
  for (IdealPool pool : {IdealPool::kOpType, IdealPool::kRole}) {
    SCOPED_TRACE(static_cast<int>(pool));
    WhatIfOptions options;
    options.pool = pool;
    ExpectSharedMatch(*t, options, 4);
  }
}

TEST(AnalyzeWindowsTest, PublishedTraces) {
  if (!HavePublishedTraces()) {
    GTEST_SKIP() << "published traces not found at " << PublishedTracesDir()
                 << ": nothing compared";
  }
  for (const char* name : {"AR", "ST", "SE"}) {
    SCOPED_TRACE(name);
    trace::OpsTable table;
    trace::JobMeta meta;
    const Status read = ReadPublishedTrace(name, &table, &meta);
    ASSERT_TRUE(read.ok()) << read.message();
    ExpectWindowsMatch(table, meta, {}, {1, 4});
    auto whole = PrepareTrace(table, meta);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    ExpectSharedMatch(*whole, {}, 3);  // shared by 3 processes
  }
}

}  // namespace
}  // namespace strag::whatif
