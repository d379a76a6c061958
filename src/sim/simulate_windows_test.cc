// SPDX-License-Identifier: Apache-2.0
// SimulateInWindows and OpsTableStream: a job simulated a window of steps at
// a time, and its table built in batches, hold the very values of the whole
// job simulated at once (what `strag simulate --out` streams).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/job_spec.h"
#include "sim/ops_table_stream.h"
#include "sim/simulator.h"

namespace strag::sim {
namespace {

// Every kind of injection, transient and step-ranged, sequences, every
// noise; each variant below adds one more feature.
constexpr std::string_view kAllKinds = R"(
job: {dp: 4, pp: 4, tp: 2, microbatches: 8, steps: 13, gpus_per_node: 4, seed: 7}
model: {layers: 8, loss_layer_cost: 1.5}
compute: {forward_ms: 8, backward_ms: 16, optimizer_ms: 2, noise: {dist: lognormal, sigma: 0.1}}
sequences: {dist: lognormal, median: 2048, sigma: 0.6, max: 16384, per_microbatch: 4, quadratic: 0.0002}
comm: {p2p_ms: 0.3, dp_allgather_ms: 2, dp_reducescatter_ms: 3, layernorm_ms: 0.5, embedding_ms: 0.4, clip_ms: 0.2, noise: {dist: exponential}}
stragglers:
  - {kind: slow_worker, rank: 9, factor: 1.3, probability: 0.5, steps: [2, 10], op: backward}
  - {kind: gc_pause, ranks: all, rate_per_step: 0.05, pause_ms: 30}
  - {kind: gc_pause, ranks: [1, 17], planned: {every: 3}, pause_ms: 50, steps: [1, 12]}
  - {kind: slow_link, node: 2, factor: 3.0, steps: [5, 9], probability: 0.7}
  - {kind: dataloader_stall, ranks: all, probability: 0.05, stall_ms: 10, steps: [4, 20]}
)";

// The balancing cap couples every step's sequences.
constexpr std::string_view kBalanced = R"(
job: {dp: 4, pp: 2, microbatches: 4, steps: 11, seed: 3, drop_slowest: 2}
compute: {forward_ms: 5, backward_ms: 10, noise: {dist: normal, sd_ms: 0.5}}
sequences: {dist: lognormal, median: 1000, sigma: 0.9, max: 8000, per_microbatch: 3, quadratic: 0.001, balance: dp}
comm: {p2p_ms: 0.2, dp_allgather_ms: 1, dp_reducescatter_ms: 1}
stragglers:
  - {kind: slow_worker, rank: 3, factor: 1.5}
)";

constexpr std::string_view kBackup = R"(
job: {dp: 6, backup_workers: 2, microbatches: 3, steps: 17, seed: 5}
compute: {forward_ms: 5, backward_ms: 10, noise: {dist: exponential}}
comm: {dp_allgather_ms: 1, dp_reducescatter_ms: 2, noise: {dist: lognormal, sigma: 0.3}}
stragglers:
  - {kind: slow_worker, rank: 2, factor: 2.0, probability: 0.4}
)";

constexpr std::string_view kInterleaved = R"(
job: {dp: 2, pp: 4, vpp: 2, cp: 2, tp: 2, microbatches: 8, steps: 7, seed: 9}
model: {layers: [3, 2, 2, 1], loss_layer_cost: 1}
compute: {forward_ms: 3, backward_ms: 6, noise: {dist: lognormal, sigma: 0.05}}
comm: {p2p_ms: 0.1, dp_allgather_ms: 1, dp_reducescatter_ms: 1}
stragglers:
  - {kind: slow_link, node: 1, factor: 2.0}
  - {kind: gc_pause, ranks: all, planned: {every: 2}, pause_ms: 20}
)";

JobSpec Parse(std::string_view yaml) {
  Result<JobSpec> spec = ParseJobSpec(yaml, "test");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : JobSpec{};
}

void AppendTable(const trace::OpsTable& from, trace::OpsTable* to) {
  auto add = [](const auto& a, auto* b) {
    b->insert(b->end(), a.begin(), a.end());
  };
  add(from.rank, &to->rank);
  add(from.dp, &to->dp);
  add(from.pp, &to->pp);
  add(from.step, &to->step);
  add(from.op_type, &to->op_type);
  add(from.seq_id, &to->seq_id);
  add(from.chunk, &to->chunk);
  add(from.microbatch, &to->microbatch);
  add(from.global_chunk, &to->global_chunk);
  add(from.start_ns, &to->start_ns);
  add(from.dur_ns, &to->dur_ns);
  add(from.tp, &to->tp);
  add(from.tokens, &to->tokens);
  if (to->extra.empty()) to->extra.emplace_back(from.extra[0].name);
  to->extra[0].Append(from.extra[0], 0, from.extra[0].size());
}

void ExpectSameTable(const trace::OpsTable& a, const trace::OpsTable& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.dp, b.dp);
  EXPECT_EQ(a.pp, b.pp);
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.op_type, b.op_type);
  EXPECT_EQ(a.seq_id, b.seq_id);
  EXPECT_EQ(a.chunk, b.chunk);
  EXPECT_EQ(a.microbatch, b.microbatch);
  EXPECT_EQ(a.global_chunk, b.global_chunk);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.dur_ns, b.dur_ns);
  EXPECT_EQ(a.tp, b.tp);
  EXPECT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.extra.size(), 1u);
  ASSERT_EQ(b.extra.size(), 1u);
  EXPECT_EQ(a.extra[0].name, b.extra[0].name);
  EXPECT_EQ(a.extra[0].Values(), b.extra[0].Values());
}

// Bit-identical doubles (EXPECT_EQ on vectors of doubles compares values,
// which is the same here: no NaN).
void ExpectSameTruth(const SimulatedJob& a, const SimulatedJob& b) {
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.step_times.span, b.step_times.span);
  EXPECT_EQ(a.step_times.opt, b.step_times.opt);
  ASSERT_EQ(a.truth.size(), b.truth.size());
  for (size_t i = 0; i < a.truth.size(); ++i) {
    EXPECT_EQ(a.truth[i].steps, b.truth[i].steps) << i;
    EXPECT_EQ(a.truth[i].slowdown, b.truth[i].slowdown) << i;
    EXPECT_EQ(a.truth[i].excess_step_ms, b.truth[i].excess_step_ms) << i;
    EXPECT_EQ(a.truth[i].blocking_slowdown, b.truth[i].blocking_slowdown);
    EXPECT_EQ(a.truth[i].blocking_excess_step_ms,
              b.truth[i].blocking_excess_step_ms);
  }
}

TEST(SimulateInWindowsTest, WindowsHoldTheWholeJobsValues) {
  for (std::string_view yaml : {kAllKinds, kBalanced, kBackup, kInterleaved}) {
    const JobSpec spec = Parse(yaml);
    const Result<SimulatedJob> whole = Simulate(spec);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    const int64_t last = spec.job.steps - 1;
    for (auto [first_step, last_step] :
         {std::pair<int64_t, int64_t>{0, last}, {2, last - 3}, {last, last}}) {
      const trace::OpsTable expected =
          ToOpsTable(*whole, first_step, last_step);
      for (int64_t window : {1, 2, 5, spec.job.steps}) {
        SCOPED_TRACE("window " + std::to_string(window) + ", steps " +
                     std::to_string(first_step) + ".." +
                     std::to_string(last_step) + ", spec:" + std::string(yaml));
        std::optional<OpsTableStream> stream;
        trace::OpsTable batch, streamed;
        int64_t next_step = 0;
        auto flush = [&](const trace::OpsTable& rows) {
          EXPECT_GE(rows.size(), 7u);
          AppendTable(rows, &streamed);
          return Status::Ok();
        };
        const Result<SimulatedJob> job = SimulateInWindows(
            spec, {.window_steps = window}, [&](const SimulatedJob& w) {
              // Windows of consecutive steps, in order, at most `window`.
              EXPECT_EQ(w.steps.front(), next_step);
              EXPECT_LE(static_cast<int64_t>(w.steps.size()), window);
              next_step = w.steps.back() + 1;
              if (!stream) stream.emplace(w, first_step, last_step);
              return stream->Add(w, 7, &batch, flush);
            });
        ASSERT_TRUE(job.ok()) << job.status().message();
        EXPECT_EQ(next_step, spec.job.steps);
        if (batch.size() > 0) AppendTable(batch, &streamed);
        EXPECT_EQ(stream->rows(), expected.size());
        ExpectSameTable(streamed, expected);
        ExpectSameTruth(*job, *whole);
        // Only one window keeps its per-op arrays (they are the job's).
        EXPECT_EQ(job->cost.empty(), window < spec.job.steps);
      }
    }
  }
}

// Errors are the whole job's, whatever window first sees one: the first
// bad op in node-major order over every step, the whole trace's length.
TEST(SimulateInWindowsTest, ErrorsAreTheWholeJobs) {
  const JobSpec bad_op = Parse(R"(
job: {dp: 2, pp: 3, microbatches: 4, steps: 9, seed: 4}
compute: {forward_ms: 300000000, backward_ms: 100000000, noise: {dist: lognormal, sigma: 1.5}}
)");
  const JobSpec too_long = Parse(R"(
job: {dp: 1, pp: 1, microbatches: 100, steps: 6}
compute: {forward_ms: 1000000000, backward_ms: 1000000000}
)");
  for (const JobSpec& spec : {bad_op, too_long}) {
    const Result<SimulatedJob> whole = Simulate(spec);
    ASSERT_FALSE(whole.ok());
    for (int64_t window : {1, 2, 4}) {
      int visits = 0;
      const Result<SimulatedJob> job =
          SimulateInWindows(spec, {.window_steps = window},
                            [&](const SimulatedJob&) {
                              ++visits;
                              return Status::Ok();
                            });
      ASSERT_FALSE(job.ok());
      EXPECT_EQ(job.status().message(), whole.status().message())
          << "window " << window;
    }
  }
  // The bad op of the whole job is not in the first window that has one.
  const Result<SimulatedJob> first = SimulateInWindows(
      bad_op, {.window_steps = 1}, [](const SimulatedJob&) {
        return Status::Ok();
      });
  EXPECT_NE(first.status().message().find("step 6, dp 0, stage 0"),
            std::string::npos)
      << first.status().message();
}

// A visitor's error stops the simulation and is returned as is.
TEST(SimulateInWindowsTest, VisitorErrorsStopTheRun) {
  const JobSpec spec = Parse(kBackup);
  int visits = 0;
  const Result<SimulatedJob> job = SimulateInWindows(
      spec, {.window_steps = 3}, [&](const SimulatedJob&) {
        return ++visits == 2 ? IoError("cannot write x: disk full")
                             : Status::Ok();
      });
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(), "cannot write x: disk full");
  EXPECT_EQ(visits, 2);
}

}  // namespace
}  // namespace strag::sim
