// SPDX-License-Identifier: Apache-2.0
// The planner through the report pipeline on simulated jobs: results do not
// depend on the threads, every row's price follows its own numbers, every
// policy that does not apply says why.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "report/inputs.h"
#include "report/render/plan_json.h"
#include "report/report.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"

namespace strag {
namespace {

report::Report PlanOf(std::string_view yaml, size_t threads) {
  auto spec = sim::ParseJobSpec(yaml, "test.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  auto job = sim::Simulate(*spec, {.truth = false, .keep_times = false});
  EXPECT_TRUE(job.ok()) << job.status().message();
  report::ReportOptions options;
  options.whatif.threads = threads;
  options.plan = report::PlanOptions{};
  auto report = report::BuildReport(report::SimulatedInput(&*job), options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return std::move(report).value();
}

constexpr std::string_view kSlowGpu =
    "job: {dp: 4, pp: 2, microbatches: 4, steps: 12, gpus_per_node: 2}\n"
    "compute: {noise: {dist: lognormal, sigma: 0.05}}\n"
    "sequences: {dist: lognormal, median: 1024, sigma: 0.3, quadratic: "
    "0.0005}\n"
    "comm: {dp_reducescatter_ms: 2}\n"
    "stragglers:\n  - {kind: slow_worker, rank: 3, factor: 1.5}\n"
    "  - {kind: gc_pause, ranks: all, rate_per_step: 0.1, pause_ms: 30}\n";

TEST(PlanModelTest, ThreadsDoNotChangeThePlan) {
  const std::string one = report::RenderPlanJson(PlanOf(kSlowGpu, 1));
  EXPECT_EQ(one, report::RenderPlanJson(PlanOf(kSlowGpu, 2)));
  EXPECT_EQ(one, report::RenderPlanJson(PlanOf(kSlowGpu, 3)));
}

TEST(PlanModelTest, EveryRowIsPricedFromItsOwnNumbers) {
  const report::Report r = PlanOf(kSlowGpu, 0);
  ASSERT_TRUE(r.plan);
  const mitigate::Plan& p = *r.plan;
  ASSERT_GE(p.rows.size(), 5u);
  const auto gpus = static_cast<double>(p.gpus);
  for (const mitigate::PlanRow& row : p.rows) {
    SCOPED_TRACE(row.policy);
    EXPECT_NEAR(row.gain_step_s, p.step_s - row.step_s, 1e-12);
    EXPECT_NEAR(row.recovered, row.gain_step_s / (p.step_s - p.ideal_s), 1e-9);
    const double rate =
        gpus - (gpus + static_cast<double>(row.effects.extra_gpus)) *
                   row.step_s / (row.effects.token_fraction * p.step_s);
    EXPECT_NEAR(row.gpu_hours_per_day, 24 * rate, 1e-6);
    const double one_off = gpus * row.effects.downtime_s / 3600;
    EXPECT_NEAR(row.net_gpu_hours, rate * p.horizon_hours - one_off, 1e-6);
    EXPECT_NEAR(row.net_usd, row.net_gpu_hours * p.usd_per_gpu_hour, 1e-6);
    if (one_off > 0 && rate > 0) {
      EXPECT_NEAR(row.break_even_hours, one_off / rate, 1e-9);
    }
    EXPECT_EQ(row.within_noise,
              !(row.gain_step_s > p.band_s) || row.within_noise);
    EXPECT_FALSE(row.action.empty());
    EXPECT_FALSE(row.evidence.empty());
  }
  // The slow GPU (rank 3, node 1 of 2-GPU nodes) and the sequences are the
  // two real causes: the two first fixes.
  ASSERT_GE(p.rows.size(), 2u);
  const mitigate::PlanRow* evict = nullptr;
  for (size_t k = 0; k < 2; ++k) {
    if (p.rows[k].policy == "evict_node") evict = &p.rows[k];
  }
  ASSERT_NE(evict, nullptr);
  // Node 1 (ranks 2-3) alone, or among the slow nodes (a replica that drew
  // heavier sequences in 12 steps can look slow too).
  const std::string& action = evict->action;
  const size_t list = action.find("nodes (");
  const std::string nodes =
      list == std::string::npos
          ? ""
          : "," + action.substr(list + 7, action.find(')', list) - list - 7) +
                ",";
  EXPECT_TRUE(action.find("node 1 (ranks 2-3)") != std::string::npos ||
              nodes.find(",1,") != std::string::npos ||
              nodes.find(" 1,") != std::string::npos)
      << action;
  EXPECT_FALSE(evict->within_noise);
}

TEST(PlanModelTest, OneWorkerHasNothingToPlanAndSaysWhy) {
  const report::Report r =
      PlanOf("job: {dp: 1, pp: 1, microbatches: 1, steps: 3}\n", 0);
  ASSERT_TRUE(r.plan);
  EXPECT_TRUE(r.plan->rows.empty());
  EXPECT_EQ(r.plan->skipped.size(), 10u);
  for (const mitigate::SkippedPolicy& s : r.plan->skipped) {
    EXPECT_FALSE(s.reason.empty()) << s.policy;
  }
}

}  // namespace
}  // namespace strag
