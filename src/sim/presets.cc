// SPDX-License-Identifier: Apache-2.0
// Built-in job specs. Each is a YAML text parsed with ParseJobSpec, so a
// preset reads like a spec file a user would write (docs/formats/sim-spec.md
// lists them) and every preset exercises the parser.

#include <string>
#include <string_view>
#include <vector>

#include "sim/job_spec.h"

namespace strag::sim {
namespace {

struct Preset {
  std::string_view name;
  std::string_view yaml;
};

// A healthy job: small noise everywhere, no stragglers.
constexpr std::string_view kBalanced = R"(
job: {dp: 8, pp: 4, tp: 2, microbatches: 8, steps: 10}
compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.02}}
comm:
  p2p_ms: 0.2
  dp_allgather_ms: 5
  dp_reducescatter_ms: 8
  noise: {dist: lognormal, sigma: 0.05}
)";

// The motivating example: 4,096 data-parallel GPUs computing 100 ms per
// step, one of them 20% slower. Every step lasts 120 ms, so the fast
// workers are busy 100/120 = 83.3% of it and 4,095 x 20 ms = 81.9
// GPU-seconds are lost per step. No noise, no communication (the defaults).
constexpr std::string_view kArticleDp4096 = R"(
job: {dp: 4096, pp: 1, tp: 1, microbatches: 1, steps: 5}
compute:
  forward_ms: 33.333333333333336   # 100/3: forward + backward = 100 ms
  backward_ms: 66.66666666666667   # 200/3
stragglers:
  - {kind: slow_worker, rank: 1842, factor: 1.2}
)";

// The article's hybrid job: DP 64 x PP 8 x TP 8 = 4,096 GPUs on 512 nodes.
// Rank 1842 is dp 38, stage 3, tp 2 on node 230.
constexpr std::string_view kArticleHybrid4096 = R"(
job:
  dp: 64
  pp: 8
  tp: 8
  microbatches: 16
  steps: 20
  gpus_per_node: 8
  gpu_hour_usd: 2.0
model: {layers: 64, loss_layer_cost: 0.8}   # the loss layer: last stage 10% heavier
compute: {forward_ms: 8, backward_ms: 16, noise: {dist: lognormal, sigma: 0.02}}
sequences:                 # mild packing imbalance; attention ~10% at the median
  dist: lognormal
  median: 2048
  sigma: 0.05
  max: 16384
  per_microbatch: 4
  linear: 1
  quadratic: 0.00005
comm:
  p2p_ms: 0.3
  dp_allgather_ms: 12
  dp_reducescatter_ms: 18
  noise: {dist: lognormal, sigma: 0.05}
stragglers:
  - {kind: slow_worker, rank: 1842, factor: 1.2}
  - {kind: gc_pause, ranks: all, rate_per_step: 0.0005, pause_ms: 200}
)";

// 16,384 GPUs, long-context lengths with a long tail. Node 300 holds the
// TP group of dp 44, stage 2.
constexpr std::string_view kLlama16k = R"(
job: {dp: 128, pp: 16, tp: 8, microbatches: 32, steps: 20}
model: {layers: 128, loss_layer_cost: 3}
compute: {forward_ms: 12, backward_ms: 24, noise: {dist: lognormal, sigma: 0.02}}
sequences: {dist: lognormal, median: 8192, sigma: 0.3, max: 32768,
            per_microbatch: 1, quadratic: 0.00005}
comm: {p2p_ms: 0.5, dp_allgather_ms: 20, dp_reducescatter_ms: 30,
       noise: {dist: lognormal, sigma: 0.05}}
stragglers:
  - {kind: gc_pause, ranks: all, rate_per_step: 0.001, pause_ms: 400}
  - {kind: slow_link, node: 300, factor: 2.0}
)";

// Look-alike of the OSDI'25 AR trace: one artificially slowed worker.
constexpr std::string_view kAr = R"(
job: {dp: 4, pp: 4, tp: 4, microbatches: 32, steps: 44}
compute: {forward_ms: 300, backward_ms: 600, noise: {dist: lognormal, sigma: 0.01}}
stragglers:
  - {kind: slow_worker, rank: 0, factor: 2.3}
)";

// Look-alike of the OSDI'25 ST trace: the last stage carries the loss layer
// on top of its 2 layers, 1.6x the work of the other stages.
constexpr std::string_view kSt = R"(
job: {dp: 2, pp: 4, microbatches: 4, steps: 32}
model: {layers: 8, loss_layer_cost: 1.2}
compute: {forward_ms: 64, backward_ms: 138}
)";

// Look-alike of the OSDI'25 SE trace: sequence-length imbalance; attention
// is ~60% of a microbatch at the median length.
constexpr std::string_view kSe = R"(
job: {dp: 32, pp: 2, cp: 2, microbatches: 8, steps: 43}
sequences: {dist: lognormal, median: 4096, sigma: 0.35, max: 32768,
            quadratic: 0.0002, per_microbatch: 2}
)";

constexpr Preset kPresets[] = {
    {"balanced", kBalanced},
    {"article-dp4096", kArticleDp4096},
    {"article-hybrid-4096", kArticleHybrid4096},
    {"llama-16k", kLlama16k},
    {"ar", kAr},
    {"st", kSt},
    {"se", kSe},
};

}  // namespace

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const Preset& preset : kPresets) names.emplace_back(preset.name);
  return names;
}

Result<JobSpec> PresetSpec(std::string_view name) {
  std::string known;
  for (const Preset& preset : kPresets) {
    if (preset.name == name) return ParseJobSpec(preset.yaml, preset.name);
    known += (known.empty() ? "" : ", ") + std::string(preset.name);
  }
  return InvalidInput("unknown preset '" + std::string(name) +
                      "' (presets: " + known + ")");
}

}  // namespace strag::sim
