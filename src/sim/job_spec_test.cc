// SPDX-License-Identifier: Apache-2.0
// Job specs: the issue's example, the presets, and one clear error (source,
// line, key path, value) for every kind of bad spec.

#include "sim/job_spec.h"

#include <gtest/gtest.h>

#include <string>

namespace strag::sim {

extern const std::string_view kIssueExample;  // spec_yaml_test.cc

namespace {

using SK = StragglerSpec::Kind;

JobSpec MustParse(std::string_view yaml) {
  auto spec = ParseJobSpec(yaml, "job.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : JobSpec{};
}

std::string ErrorOf(std::string_view yaml) {
  auto spec = ParseJobSpec(yaml, "bad.yaml");
  EXPECT_FALSE(spec.ok()) << "accepted: " << yaml;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidInput);
  return spec.status().message();
}

TEST(JobSpecTest, IssueExample) {
  const JobSpec spec = MustParse(kIssueExample);
  EXPECT_EQ(spec.name, "job.yaml");
  EXPECT_EQ(spec.job.dp, 64);
  EXPECT_EQ(spec.job.pp, 8);
  EXPECT_EQ(spec.job.tp, 8);
  EXPECT_EQ(spec.job.microbatches, 16);
  EXPECT_EQ(spec.job.steps, 20);
  EXPECT_EQ(spec.job.seed, 1u);
  EXPECT_DOUBLE_EQ(spec.job.gpu_hour_usd, 2.0);
  EXPECT_EQ(spec.model.layers, 64);
  EXPECT_TRUE(spec.model.layers_per_stage.empty());
  EXPECT_DOUBLE_EQ(spec.model.loss_layer_cost, 9.0);
  EXPECT_DOUBLE_EQ(spec.compute.forward_ms, 8.0);
  EXPECT_EQ(spec.compute.noise.kind, NoiseSpec::Kind::kLognormal);
  EXPECT_DOUBLE_EQ(spec.compute.noise.sigma, 0.02);
  EXPECT_EQ(spec.sequences.kind, SequenceSection::Kind::kFixed);
  EXPECT_EQ(spec.sequences.length, 4096);
  EXPECT_DOUBLE_EQ(spec.comm.dp_reducescatter_ms, 18.0);
  EXPECT_DOUBLE_EQ(spec.comm.noise.sigma, 0.05);
  ASSERT_EQ(spec.stragglers.size(), 4u);
  EXPECT_EQ(spec.stragglers[0].kind, SK::kSlowWorker);
  EXPECT_EQ(spec.stragglers[0].rank, 1842);
  EXPECT_DOUBLE_EQ(spec.stragglers[0].factor, 1.2);
  EXPECT_FALSE(spec.stragglers[0].steps.has_value());
  EXPECT_EQ(spec.stragglers[1].kind, SK::kGcPause);
  EXPECT_TRUE(spec.stragglers[1].all_ranks);
  EXPECT_DOUBLE_EQ(spec.stragglers[1].rate_per_step, 0.05);
  EXPECT_DOUBLE_EQ(spec.stragglers[1].pause_ms, 300);
  EXPECT_EQ(spec.stragglers[2].kind, SK::kSlowLink);
  EXPECT_EQ(spec.stragglers[2].node, 12);
  EXPECT_EQ(spec.stragglers[3].kind, SK::kDataloaderStall);
  EXPECT_EQ(spec.stragglers[3].rank, 7);
  EXPECT_DOUBLE_EQ(spec.stragglers[3].probability, 0.1);
  EXPECT_DOUBLE_EQ(spec.stragglers[3].stall_ms, 200);
  EXPECT_EQ(spec.locations.at("stragglers[3].rank").line, 10);
  EXPECT_EQ(spec.locations.at("job.gpu_hour_usd").text, "2.0");
}

TEST(JobSpecTest, DefaultsAndEveryKey) {
  const JobSpec empty = MustParse("# nothing\n");
  EXPECT_EQ(empty.job.dp, 1);
  EXPECT_EQ(empty.stragglers.size(), 0u);
  EXPECT_TRUE(ValidateJobSpec(JobSpec{}).ok());

  const JobSpec spec = MustParse(R"(
job: {dp: 6, backup_workers: 2, tp: 2, cp: 2, steps: 40, seed: 18446744073709551615,
      gpus_per_node: 4, gpu_hour_usd: 1.5}
model: {layers: 7, loss_layer_cost: 0.5}
compute: {forward_ms: 1, backward_ms: 2, optimizer_ms: 3, noise: {dist: normal, sd_ms: 0.5}}
sequences: {dist: file, path: lengths.txt, per_microbatch: 3, linear: 2, quadratic: 1e-4}
comm:
  p2p_ms: 0.1
  dp_allgather_ms: 1
  dp_reducescatter_ms: 2
  layernorm_ms: 0.3
  embedding_ms: 0.4
  clip_ms: 0.5
  noise: {dist: exponential}
stragglers:
  - {kind: slow_worker, rank: 31, factor: 3, steps: [2, 5], probability: 0.5}
  - {kind: gc_pause, ranks: [0, 31], pause_ms: 100, planned: {every: 10}}
  - {kind: gc_pause, rank: 3, pause_ms: 100, rate_per_step: 1}
  - {kind: slow_link, node: 7, factor: 1}
  - {kind: dataloader_stall, ranks: all, stall_ms: 0}
)");
  EXPECT_EQ(spec.job.backup_workers, 2);
  EXPECT_EQ(spec.job.seed, 18446744073709551615u);
  EXPECT_EQ(spec.compute.noise.kind, NoiseSpec::Kind::kNormal);
  EXPECT_DOUBLE_EQ(spec.compute.noise.sd_ms, 0.5);
  EXPECT_DOUBLE_EQ(spec.compute.optimizer_ms, 3);
  EXPECT_EQ(spec.sequences.kind, SequenceSection::Kind::kFile);
  EXPECT_EQ(spec.sequences.path, "lengths.txt");
  EXPECT_EQ(spec.sequences.per_microbatch, 3);
  EXPECT_DOUBLE_EQ(spec.sequences.quadratic, 1e-4);
  EXPECT_DOUBLE_EQ(spec.comm.clip_ms, 0.5);
  EXPECT_EQ(spec.comm.noise.kind, NoiseSpec::Kind::kExponential);
  ASSERT_EQ(spec.stragglers.size(), 5u);
  ASSERT_TRUE(spec.stragglers[0].steps.has_value());
  EXPECT_EQ(spec.stragglers[0].steps->first, 2);
  EXPECT_EQ(spec.stragglers[0].steps->second, 5);
  EXPECT_DOUBLE_EQ(spec.stragglers[0].probability, 0.5);
  EXPECT_EQ(spec.stragglers[1].ranks, (std::vector<int64_t>{0, 31}));
  EXPECT_EQ(spec.stragglers[1].planned_every, 10);
  EXPECT_EQ(spec.stragglers[2].rank, 3);
  EXPECT_TRUE(spec.stragglers[2].ranks.empty());
  EXPECT_EQ(spec.stragglers[3].node, 7);  // 32 ranks / 4 per node: 8 nodes
  EXPECT_TRUE(spec.stragglers[4].all_ranks);
}

TEST(JobSpecTest, LayersListAndLognormalLengths) {
  const JobSpec spec = MustParse(R"(
job: {pp: 3, vpp: 2, microbatches: 6}
model:
  layers: [3, 4, 2]
sequences: {dist: lognormal, median: 2048, sigma: 0.5, max: 8192}
)");
  EXPECT_EQ(spec.model.layers_per_stage, (std::vector<int32_t>{3, 4, 2}));
  EXPECT_EQ(spec.model.layers, 9);
  EXPECT_EQ(spec.sequences.kind, SequenceSection::Kind::kLognormal);
  EXPECT_DOUBLE_EQ(spec.sequences.median, 2048);
  EXPECT_EQ(spec.sequences.max, 8192);
}

TEST(JobSpecTest, Presets) {
  const std::vector<std::string> names = PresetNames();
  EXPECT_EQ(names, (std::vector<std::string>{"balanced", "article-dp4096",
                                             "article-hybrid-4096", "llama-16k",
                                             "ar", "st", "se"}));
  for (const std::string& name : names) {
    auto spec = PresetSpec(name);
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.status().message();
    EXPECT_EQ(spec->name, name);
    EXPECT_TRUE(ValidateJobSpec(*spec).ok()) << name;
  }
  const JobSpec dp4096 = *PresetSpec("article-dp4096");
  EXPECT_EQ(dp4096.job.dp, 4096);
  EXPECT_NEAR(dp4096.compute.forward_ms + dp4096.compute.backward_ms, 100.0,
              1e-12);
  EXPECT_EQ(dp4096.compute.noise.kind, NoiseSpec::Kind::kNone);
  EXPECT_EQ(dp4096.comm.dp_allgather_ms, 0.0);
  ASSERT_EQ(dp4096.stragglers.size(), 1u);
  EXPECT_EQ(dp4096.stragglers[0].rank, 1842);
  EXPECT_DOUBLE_EQ(dp4096.stragglers[0].factor, 1.2);

  const JobSpec hybrid = *PresetSpec("article-hybrid-4096");
  EXPECT_EQ(int64_t{hybrid.job.dp} * hybrid.job.pp * hybrid.job.tp, 4096);
  EXPECT_EQ(hybrid.sequences.per_microbatch, 4);
  EXPECT_DOUBLE_EQ(hybrid.sequences.quadratic, 0.00005);
  ASSERT_EQ(hybrid.stragglers.size(), 2u);
  EXPECT_TRUE(hybrid.stragglers[1].all_ranks);

  const JobSpec llama = *PresetSpec("llama-16k");
  EXPECT_EQ(int64_t{llama.job.dp} * llama.job.pp * llama.job.tp, 16384);
  EXPECT_EQ(llama.stragglers[1].kind, SK::kSlowLink);
  EXPECT_EQ(PresetSpec("se")->job.cp, 2);
  EXPECT_DOUBLE_EQ(PresetSpec("st")->model.loss_layer_cost, 1.2);
  EXPECT_EQ(PresetSpec("ar")->stragglers[0].rank, 0);

  auto unknown = PresetSpec("nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(unknown.status().message(),
            "unknown preset 'nope' (presets: balanced, article-dp4096, "
            "article-hybrid-4096, llama-16k, ar, st, se)");
}

// Validation of specs built in code names the path (there is no line).
TEST(JobSpecTest, ValidateBuiltSpecs) {
  JobSpec spec;
  spec.job.dp = 0;
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "job spec: job.dp: 0 must be at least 1");
  spec = JobSpec{};
  spec.name = "mine";
  spec.job.pp = 2;
  spec.model.layers = 5;
  spec.model.layers_per_stage = {2, 2};
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "mine: model.layers: [2, 2] sums to 4, but layers is 5");
  spec.model.layers = 4;
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  StragglerSpec gc;
  gc.kind = SK::kGcPause;
  gc.rate_per_step = 0.1;
  spec.stragglers.push_back(gc);
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "mine: stragglers[0].ranks: [] selects no rank (give rank, "
            "ranks: [...] or ranks: all)");

  // A parsed spec changed afterwards still gets lines.
  JobSpec parsed = MustParse(
      "job: {dp: 8}\nstragglers:\n  - {kind: slow_worker, rank: 5, "
      "factor: 2}\n");
  parsed.job.dp = 4;
  EXPECT_EQ(ValidateJobSpec(parsed).message(),
            "job.yaml: line 3: stragglers[0].rank: 5 is outside the world of "
            "4 ranks (dp 4 x pp 1 x tp 1 x cp 1)");
}

// Integer keys take a whole number in any decimal form (issue 11: `steps:
// 1e9` is a billion steps, refused by its size, not "not an integer").
TEST(JobSpecTest, IntegersInExponentForm) {
  auto spec = ParseJobSpec(
      "job: {dp: 1e3, steps: 2.0E1, seed: 1.8e19, microbatches: +4e0}\n",
      "e.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->job.dp, 1000);
  EXPECT_EQ(spec->job.steps, 20);
  EXPECT_EQ(spec->job.seed, uint64_t{18'000'000'000'000'000'000u});
  EXPECT_EQ(spec->job.microbatches, 4);
  // The limits are accepted, one past them refused.
  auto at = ParseJobSpec(
      "compute: {forward_ms: 1e9}\nsequences: {length: 2147483647}\n"
      "stragglers:\n  - {kind: slow_worker, rank: 0, factor: 1e6}\n",
      "at.yaml");
  EXPECT_TRUE(at.ok()) << at.status().message();
}

TEST(JobSpecTest, Errors) {
  struct Case {
    std::string_view yaml;
    std::string_view message;
  };
  const Case cases[] = {
      // Structure and types.
      {"job: {dp: 1\n",
       "bad.yaml: line 1, column 6: unclosed '{' (no '}' before the end of the input)"},
      {"- job\n", "bad.yaml: line 1: the spec: expected a map, found a list"},
      {"jobs: {dp: 2}\n",
       "bad.yaml: line 1: jobs: unknown key (allowed: job, model, compute, "
       "sequences, comm, stragglers)"},
      {"job:\n  dp: 2\n  dpp: 3\n",
       "bad.yaml: line 3: job.dpp: unknown key (allowed: dp, pp, tp, cp, vpp, "
       "microbatches, steps, seed, gpus_per_node, gpu_hour_usd, "
       "backup_workers, microbatches_per_replica, drop_slowest)"},
      {"job: {dp: 2, microbatches: 2, drop_slowest: 4}\n",
       "bad.yaml: line 1: job.drop_slowest: 4 must be between 0 and dp x "
       "microbatches - 1 (3)"},
      {"job: {dp: 2, microbatches: 4, microbatches_per_replica: [4]}\n",
       "bad.yaml: line 1: job.microbatches_per_replica: [4] needs one count "
       "per DP replica (dp 2)"},
      {"job: {dp: 2, microbatches: 4, microbatches_per_replica: [4, 5]}\n",
       "bad.yaml: line 1: job.microbatches_per_replica[1]: 5 must be between "
       "1 and microbatches (4)"},
      {"job: 5\n", "bad.yaml: line 1: job: expected a map, found 5"},
      {"job: {dp: abc}\n", "bad.yaml: line 1: job.dp: \"abc\" is not a number"},
      {"job: {dp: \"8\"}\n", "bad.yaml: line 1: job.dp: \"8\" is not a number"},
      {"job: {dp: 2.5}\n", "bad.yaml: line 1: job.dp: 2.5 is not an integer"},
      {"job: {dp: 99999999999}\n",
       "bad.yaml: line 1: job.dp: 99999999999 is too large (at most "
       "2147483647)"},
      {"job: {steps: 1e10}\n",
       "bad.yaml: line 1: job.steps: 1e10 is too large (at most 2147483647)"},
      {"job: {dp: -1e10}\n",
       "bad.yaml: line 1: job.dp: -1e10 is too small (at least -2147483648)"},
      {"job: {seed: 1e20}\n",
       "bad.yaml: line 1: job.seed: 1e20 is too large (at most "
       "18446744073709551615)"},
      {"job: {steps: 1.5e0}\n",
       "bad.yaml: line 1: job.steps: 1.5e0 is not an integer"},
      {"job: {seed: -1}\n", "bad.yaml: line 1: job.seed: -1 is negative"},
      {"job: {dp: }\n",
       "bad.yaml: line 1: job.dp: expected a number, found "
       "nothing"},
      {"compute: {forward_ms: [1]}\n",
       "bad.yaml: line 1: compute.forward_ms: expected a number, found a list"},
      {"compute: {forward_ms: .inf}\n",
       "bad.yaml: line 1: compute.forward_ms: \".inf\" is not a number"},
      {"stragglers: {kind: gc_pause}\n",
       "bad.yaml: line 1: stragglers: expected a list, found a map"},
      {"stragglers:\n  -\n",
       "bad.yaml: line 2: stragglers[0]: expected a map, found nothing"},
      // Ranges.
      {"compute:\n  forward_ms: -1\n",
       "bad.yaml: line 2: compute.forward_ms: -1 is negative"},
      {"comm: {p2p_ms: -0.50}\n",
       "bad.yaml: line 1: comm.p2p_ms: -0.50 is negative"},
      {"job: {dp: 0}\n", "bad.yaml: line 1: job.dp: 0 must be at least 1"},
      {"job:\n  microbatches: -2\n",
       "bad.yaml: line 2: job.microbatches: -2 must be at least 1"},
      {"sequences: {per_microbatch: 0}\n",
       "bad.yaml: line 1: sequences.per_microbatch: 0 must be at least 1"},
      {"sequences: {length: 0}\n",
       "bad.yaml: line 1: sequences.length: 0 must be at least 1"},
      {"sequences: {linear: 0}\n",
       "bad.yaml: line 1: sequences.linear: 0 and quadratic 0: a microbatch "
       "costs nothing"},
      {"sequences: {dist: lognormal, median: 4096, sigma: 1, max: 1000}\n",
       "bad.yaml: line 1: sequences.max: 1000 is below the median 4096"},
      {"sequences: {dist: lognormal, median: 0, sigma: 1}\n",
       "bad.yaml: line 1: sequences.median: 0 is not positive"},
      {"compute: {noise: {dist: lognormal, sigma: -0.1}}\n",
       "bad.yaml: line 1: compute.noise.sigma: -0.1 is negative"},
      {"stragglers:\n  - {kind: slow_worker, rank: 0, factor: 2, "
       "probability: 1.5}\n",
       "bad.yaml: line 2: stragglers[0].probability: 1.5 is outside [0, 1]"},
      {"stragglers:\n  - {kind: gc_pause, ranks: all, pause_ms: 1, "
       "rate_per_step: -0.1}\n",
       "bad.yaml: line 2: stragglers[0].rate_per_step: -0.1 is outside [0, 1]"},
      {"stragglers:\n  - {kind: slow_worker, rank: 0, factor: 0.8}\n",
       "bad.yaml: line 2: stragglers[0].factor: 0.8 must be at least 1"},
      {"stragglers:\n  - kind: slow_link\n    node: 0\n    factor: 0.5\n",
       "bad.yaml: line 4: stragglers[0].factor: 0.5 must be at least 1"},
      {"stragglers:\n  - {kind: dataloader_stall, rank: 0, stall_ms: -5}\n",
       "bad.yaml: line 2: stragglers[0].stall_ms: -5 is negative"},
      // Kinds, dists and the keys they need.
      {"compute: {noise: {dist: gamma}}\n",
       "bad.yaml: line 1: compute.noise.dist: \"gamma\" is not one of: none, "
       "lognormal, normal, exponential"},
      {"comm: {noise: {sigma: 1}}\n",
       "bad.yaml: line 1: comm.noise: missing key 'dist' (one of: none, "
       "lognormal, normal, exponential)"},
      {"compute: {noise: {dist: lognormal}}\n",
       "bad.yaml: line 1: compute.noise: missing key 'sigma' (required for "
       "dist lognormal)"},
      {"compute: {noise: {dist: normal, sigma: 1}}\n",
       "bad.yaml: line 1: compute.noise.sigma: unknown key for dist normal "
       "(allowed: dist, sd_ms)"},
      {"sequences: {dist: file}\n",
       "bad.yaml: line 1: sequences: missing key 'path' (required for dist "
       "file)"},
      {"sequences: {dist: lognormal, median: 1, sigma: 1, length: 5}\n",
       "bad.yaml: line 1: sequences.length: unknown key for dist lognormal "
       "(allowed: dist, median, sigma, max, per_microbatch, linear, "
       "quadratic, balance)"},
      {"sequences: {dist: fixed, balance: kk}\n",
       "bad.yaml: line 1: sequences.balance: \"kk\" is not none, dp or "
       "microbatch"},
      {"sequences: {dist: fixed, median: 5}\n",
       "bad.yaml: line 1: sequences.median: unknown key for dist fixed "
       "(allowed: dist, length, per_microbatch, linear, quadratic, "
       "balance)"},
      {"stragglers:\n  - {kind: cosmic_ray}\n",
       "bad.yaml: line 2: stragglers[0].kind: \"cosmic_ray\" is not one of: "
       "slow_worker, gc_pause, slow_link, dataloader_stall"},
      {"stragglers:\n  - {rank: 3}\n",
       "bad.yaml: line 2: stragglers[0]: missing key 'kind' (one of: "
       "slow_worker, gc_pause, slow_link, dataloader_stall)"},
      {"stragglers:\n  - {kind: slow_worker, factor: 1.2}\n",
       "bad.yaml: line 2: stragglers[0]: missing key 'rank' (required for "
       "kind slow_worker)"},
      {"stragglers:\n  - {kind: slow_link, factor: 2}\n",
       "bad.yaml: line 2: stragglers[0]: missing key 'node' (required for "
       "kind slow_link)"},
      {"stragglers:\n  - {kind: gc_pause, ranks: all}\n",
       "bad.yaml: line 2: stragglers[0]: missing key 'pause_ms' (required "
       "for kind gc_pause)"},
      {"stragglers:\n  - {kind: gc_pause, ranks: all, pause_ms: 5}\n",
       "bad.yaml: line 2: stragglers[0]: missing key 'rate_per_step' or "
       "'planned' (required for kind gc_pause)"},
      {"stragglers:\n  - {kind: dataloader_stall, stall_ms: 5}\n",
       "bad.yaml: line 2: stragglers[0]: missing key 'rank' or 'ranks' (a "
       "list or all)"},
      {"stragglers:\n  - {kind: slow_worker, rank: 1, factor: 2, "
       "pause_ms: 3}\n",
       "bad.yaml: line 2: stragglers[0].pause_ms: unknown key for kind "
       "slow_worker (allowed: kind, rank, factor, steps, probability, op)"},
      {"stragglers:\n  - {kind: slow_worker, rank: 1, factor: 2, op: gc}\n",
       "bad.yaml: line 2: stragglers[0].op: \"gc\" is not one of: forward, "
       "backward"},
      {"stragglers:\n  - {kind: dataloader_stall, rank: 1, ranks: all, "
       "stall_ms: 1}\n",
       "bad.yaml: line 2: stragglers[0].ranks: cannot be combined with rank"},
      {"stragglers:\n  - {kind: gc_pause, ranks: some, pause_ms: 1, "
       "rate_per_step: 0.1}\n",
       "bad.yaml: line 2: stragglers[0].ranks: some is not 'all' or a list "
       "of ranks"},
      {"stragglers:\n  - {kind: gc_pause, ranks: all, pause_ms: 1, "
       "rate_per_step: 0.1, planned: {every: 5}}\n",
       "bad.yaml: line 2: stragglers[0].planned: cannot be combined with "
       "rate_per_step (planned pauses replace the random ones)"},
      {"stragglers:\n  - {kind: gc_pause, ranks: all, pause_ms: 1, "
       "planned: {every: 0}}\n",
       "bad.yaml: line 2: stragglers[0].planned.every: 0 must be at least 1"},
      {"stragglers:\n  - {kind: gc_pause, ranks: all, pause_ms: 1, "
       "planned: {each: 5}}\n",
       "bad.yaml: line 2: stragglers[0].planned.each: unknown key (allowed: "
       "every)"},
      // Steps.
      {"stragglers:\n  - {kind: slow_worker, rank: 0, factor: 2, steps: "
       "[5, 2]}\n",
       "bad.yaml: line 2: stragglers[0].steps: [5, 2] ends before it starts"},
      {"job: {steps: 20}\nstragglers:\n  - {kind: slow_worker, rank: 0, "
       "factor: 2, steps: [30, 40]}\n",
       "bad.yaml: line 3: stragglers[0].steps: [30, 40] starts after the last "
       "step (steps are 0..19)"},
      {"stragglers:\n  - {kind: slow_worker, rank: 0, factor: 2, steps: [1]}\n",
       "bad.yaml: line 2: stragglers[0].steps: [1] is not a range [from, to]"},
      {"stragglers:\n  - {kind: slow_worker, rank: 0, factor: 2, steps: "
       "[a, 2]}\n",
       "bad.yaml: line 2: stragglers[0].steps: \"a\" is not a number"},
      // Cross-field rules.
      {"job: {dp: 4, pp: 2}\nstragglers:\n  - {kind: slow_worker, rank: 8, "
       "factor: 2}\n",
       "bad.yaml: line 3: stragglers[0].rank: 8 is outside the world of 8 "
       "ranks (dp 4 x pp 2 x tp 1 x cp 1)"},
      {"job: {dp: 4, backup_workers: 2}\nstragglers:\n  - {kind: "
       "slow_worker, rank: 6, factor: 2}\n",
       "bad.yaml: line 3: stragglers[0].rank: 6 is outside the world of 6 "
       "ranks (dp 4 + 2 backup x pp 1 x tp 1 x cp 1)"},
      {"stragglers:\n  - {kind: slow_worker, rank: -1, factor: 2}\n",
       "bad.yaml: line 2: stragglers[0].rank: -1 is negative"},
      {"job: {dp: 4, tp: 4, gpus_per_node: 8}\nstragglers:\n  - {kind: "
       "slow_link, node: 2, factor: 2}\n",
       "bad.yaml: line 3: stragglers[0].node: 2 is outside the 2 nodes (16 "
       "ranks, 8 per node)"},
      {"job: {dp: 8}\nstragglers:\n  - kind: gc_pause\n    ranks:\n      - "
       "1\n      - 99\n    pause_ms: 1\n    rate_per_step: 0.5\n",
       "bad.yaml: line 6: stragglers[0].ranks[1]: 99 is outside the world of "
       "8 ranks (dp 8 x pp 1 x tp 1 x cp 1)"},
      {"job: {dp: 8}\nstragglers:\n  - {kind: dataloader_stall, ranks: [3, "
       "3], stall_ms: 1}\n",
       "bad.yaml: line 3: stragglers[0].ranks[1]: 3 is listed twice"},
      {"job: {pp: 4}\nmodel: {layers: [2, 2, 2]}\n",
       "bad.yaml: line 2: model.layers: [2, 2, 2] lists 3 stages, but pp is "
       "4"},
      {"model:\n  layers: []\n",
       "bad.yaml: line 2: model.layers: [] lists no stage"},
      {"job: {pp: 2}\nmodel: {layers: [2, -1]}\n",
       "bad.yaml: line 2: model.layers[1]: -1 is negative"},
      {"job: {pp: 4}\nmodel: {layers: 10}\n",
       "bad.yaml: line 2: model.layers: 10 does not split evenly over pp 4 "
       "stages (give a list of layers per stage)"},
      {"job: {pp: 4, vpp: 2, microbatches: 6}\n",
       "bad.yaml: line 1: job.vpp: 2 (interleaved 1F1B) needs microbatches "
       "divisible by pp: 6 is not a multiple of 4"},
      {"job: {pp: 2, backup_workers: 1}\n",
       "bad.yaml: line 1: job.backup_workers: 1 needs pp 1 (a backup replaces "
       "a whole DP replica), found pp 2"},
      // Limits (issue 11): durations, factors, coefficients, lengths.
      {"compute: {forward_ms: 1e15}\n",
       "bad.yaml: line 1: compute.forward_ms: 1e15 must be at most 1e9 ms "
       "(1e6 s, the limit of one op)"},
      {"comm:\n  p2p_ms: 1000000001\n",
       "bad.yaml: line 2: comm.p2p_ms: 1000000001 must be at most 1e9 ms "
       "(1e6 s, the limit of one op)"},
      {"compute: {noise: {dist: normal, sd_ms: 1e300}}\n",
       "bad.yaml: line 1: compute.noise.sd_ms: 1e300 must be at most 1e9 ms "
       "(1e6 s, the limit of one op)"},
      {"stragglers:\n  - {kind: slow_worker, rank: 0, factor: 1e300}\n",
       "bad.yaml: line 2: stragglers[0].factor: 1e300 must be at most 1e6"},
      {"stragglers:\n  - {kind: slow_link, node: 0, factor: 2e6}\n",
       "bad.yaml: line 2: stragglers[0].factor: 2e6 must be at most 1e6"},
      {"stragglers:\n  - {kind: gc_pause, ranks: all, pause_ms: 1e10, "
       "rate_per_step: 0.1}\n",
       "bad.yaml: line 2: stragglers[0].pause_ms: 1e10 must be at most 1e9 ms "
       "(1e6 s, the limit of one op)"},
      {"stragglers:\n  - {kind: dataloader_stall, rank: 0, stall_ms: "
       "1e300}\n",
       "bad.yaml: line 2: stragglers[0].stall_ms: 1e300 must be at most 1e9 "
       "ms (1e6 s, the limit of one op)"},
      {"job: {gpu_hour_usd: 1e300}\n",
       "bad.yaml: line 1: job.gpu_hour_usd: 1e300 must be at most 1e6"},
      {"model: {loss_layer_cost: 1e300}\n",
       "bad.yaml: line 1: model.loss_layer_cost: 1e300 must be at most 1e6"},
      {"sequences: {quadratic: 1e300}\n",
       "bad.yaml: line 1: sequences.quadratic: 1e300 must be at most 1e6"},
      {"sequences: {length: 1e12}\n",
       "bad.yaml: line 1: sequences.length: 1e12 must be at most 2147483647 "
       "tokens (2^31 - 1)"},
      {"sequences: {dist: lognormal, median: 1e300, sigma: 1, max: "
       "9223372036854775807}\n",
       "bad.yaml: line 1: sequences.max: 9223372036854775807 must be at most "
       "2147483647 tokens (2^31 - 1)"},
      {"job: {pp: 2, vpp: 2000000, microbatches: 2000}\n",
       "bad.yaml: line 1: job.microbatches: 2000 x vpp 2000000 exceeds 2^31 - "
       "1 forwards per stage and step"},
      {"job: {dp: 65536, tp: 65536}\n",
       "bad.yaml: line 1: job: (dp + backup_workers) x pp x tp x cp exceeds "
       "2^31 - 1 ranks"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ErrorOf(c.yaml), c.message) << c.yaml;
  }
}

}  // namespace
}  // namespace strag::sim
