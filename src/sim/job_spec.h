// SPDX-License-Identifier: Apache-2.0
// JobSpec: what `strag simulate` simulates (docs/formats/sim-spec.md).
//
// A job is a Megatron-style hybrid-parallel training job (DP x PP x TP x CP,
// optional virtual pipeline chunks), its per-op duration models, and the
// stragglers injected into it. Times are milliseconds in the spec (as users
// write them) and are converted to seconds only by the simulator.

#ifndef STRAG_SRC_SIM_JOB_SPEC_H_
#define STRAG_SRC_SIM_JOB_SPEC_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace strag::sim {

// Limits of a spec (docs/formats/sim-spec.md, "Limits"). Times are int64
// nanoseconds in a trace (ops CSV: at most 9.2e9 s): one op may last at
// most 1e6 s (1e15 ns, so that sums of thousands of ops still fit) and a
// whole simulated trace at most 1e9 s (1e18 ns, 9x below int64's limit).
// Each duration of the spec is checked against the op limit when the spec
// is validated; products (stage, sequence and straggler factors, noise
// draws) are checked by the simulator on the drawn durations.
inline constexpr double kMaxDurationMs = 1e9;    // any time key: 1e6 s
inline constexpr double kMaxOpSeconds = 1e6;     // any simulated op
inline constexpr double kMaxTraceSeconds = 1e9;  // a simulated trace
inline constexpr double kMaxFactor = 1e6;        // straggler factors
inline constexpr double kMaxCoefficient = 1e6;   // loss_layer_cost,
                                                 // linear, quadratic
inline constexpr double kMaxGpuHourUsd = 1e6;    // job.gpu_hour_usd
inline constexpr int64_t kMaxSequenceLength = 2147483647;  // tokens, 2^31-1

// Random variation of one duration.
struct NoiseSpec {
  enum class Kind {
    kNone,
    kLognormal,    // d * exp(sigma * Z - sigma^2 / 2): mean d, `sigma`
    kNormal,       // d + sd_ms * Z, clamped at 0
    kExponential,  // Exp with mean d
  };
  Kind kind = Kind::kNone;
  double sigma = 0.0;  // lognormal
  double sd_ms = 0.0;  // normal
};

struct JobSection {
  int32_t dp = 1, pp = 1, tp = 1, cp = 1, vpp = 1;
  int32_t microbatches = 1;
  int32_t steps = 1;
  int32_t gpus_per_node = 8;
  double gpu_hour_usd = 2.0;
  uint64_t seed = 1;
  // DP backup workers: each DP collective proceeds with the first `dp` of
  // dp + backup_workers replicas (the job has dp + backup_workers replicas).
  int32_t backup_workers = 0;
  // Microbatches of each DP replica (the planner's dp_resplit as ground
  // truth); empty: `microbatches` each. A replica with n < microbatches runs
  // microbatches n.. as empty (zero compute).
  std::vector<int32_t> microbatches_per_replica = {};
  // The planner's drop_slowest as ground truth: in each step the k
  // (replica, microbatch) pairs of most compute run empty.
  int32_t drop_slowest = 0;
};

struct ModelSection {
  int32_t layers = 0;                     // 0: one per stage
  std::vector<int32_t> layers_per_stage;  // empty: even partition
  double loss_layer_cost = 0.0;           // in layer units, on the last stage
};

struct ComputeSection {
  double forward_ms = 10.0;   // per microbatch per stage, even partition,
  double backward_ms = 20.0;  // at the reference sequence length
  double optimizer_ms = 0.0;
  NoiseSpec noise;
};

struct SequenceSection {
  enum class Kind { kFixed, kLognormal, kFile };
  Kind kind = Kind::kFixed;
  int64_t length = 4096;         // fixed (the reference length)
  double median = 2048;          // lognormal (the reference length)
  double sigma = 1.0;            // lognormal
  int64_t max = 32768;           // lognormal: clamp
  std::string path;              // file: one length per line (reference:
                                 // the median of `lengths`)
  std::vector<int64_t> lengths;  // file contents, loaded by the caller
  int32_t per_microbatch = 1;    // sequences packed into a microbatch
  // Cost of a microbatch = a * sum(s) + b * sum(s^2), normalised so that
  // `per_microbatch` sequences of the reference length cost forward_ms.
  double linear = 1.0;     // a
  double quadratic = 0.0;  // b (per token, relative to a)
  // The fix the planner proposes, applied to the drawn sequences of each
  // step (base/partition.h, on the cost a*s + b*s^2): kDp moves sequences
  // between the DP replicas (Karmarkar-Karp or LPT, the better) and packs
  // each replica's into its microbatches (LPT under the largest drawn
  // microbatch's tokens); kMicrobatch only repacks within each replica.
  enum class Balance { kNone, kDp, kMicrobatch };
  Balance balance = Balance::kNone;
};

struct CommSection {
  double p2p_ms = 0.0;
  double dp_allgather_ms = 0.0;
  double dp_reducescatter_ms = 0.0;
  double layernorm_ms = 0.0;
  double embedding_ms = 0.0;
  double clip_ms = 0.0;
  NoiseSpec noise;
};

struct StragglerSpec {
  enum class Kind { kSlowWorker, kGcPause, kSlowLink, kDataloaderStall };
  Kind kind = Kind::kSlowWorker;
  // Global ranks. slow_worker: `rank`. gc_pause, dataloader_stall: one of
  // `rank`, `ranks` (a list) or `all_ranks` (`ranks: all`); -1: none.
  int64_t rank = -1;
  bool all_ranks = false;
  std::vector<int64_t> ranks;
  int32_t node = -1;    // slow_link
  double factor = 1.0;  // slow_worker (compute), slow_link (comm); >= 1
  // slow_worker `op`: which passes it slows (forward, backward, or both).
  enum class Pass { kBoth, kForward, kBackward };
  Pass pass = Pass::kBoth;
  // When it acts: every step in [from, to] (inclusive, step indices from
  // 0), and on each of those with `probability`.
  std::optional<std::pair<int64_t, int64_t>> steps;
  double probability = 1.0;
  double rate_per_step = 0.0;  // gc_pause: pauses per rank and step
  double pause_ms = 0.0;       // gc_pause
  int32_t planned_every = 0;   // gc_pause: synchronised every N steps
  double stall_ms = 0.0;       // dataloader_stall
};

// Where ParseJobSpec found a key: its 1-based line and, for a scalar, the
// value as written.
struct SpecLocation {
  int32_t line = 0;
  std::string text;
};

struct JobSpec {
  std::string name;  // preset name or file name
  JobSection job;
  ModelSection model;
  ComputeSection compute;
  SequenceSection sequences;
  CommSection comm;
  std::vector<StragglerSpec> stragglers;
  // Key path ("job.dp", "stragglers[1].ranks[0]") -> where it was written,
  // so that ValidateJobSpec names lines and values as written. Filled by
  // ParseJobSpec; empty for specs built in code.
  std::map<std::string, SpecLocation, std::less<>> locations;
};

// Parses and validates a spec. Errors are kInvalidInput naming the source,
// the line and the key path with its value, e.g.
// "job.yaml: line 4: stragglers[0].factor: 0.8 must be at least 1".
// A `sequences: {dist: file}` spec keeps `path`; the caller loads `lengths`.
Result<JobSpec> ParseJobSpec(std::string_view yaml, std::string_view source);

// Checks ranges (sizes >= 1, times >= 0, probabilities in [0, 1], factors
// >= 1) and cross-field rules (a rank outside the world, a node that does
// not exist, layers_per_stage of the wrong length, ...). Errors are
// kInvalidInput, "NAME: line N: PATH: VALUE what" (no line when the key has
// no location; NAME is "job spec" when `name` is empty).
Status ValidateJobSpec(const JobSpec& spec);

// Built-in presets (docs/formats/sim-spec.md lists them).
std::vector<std::string> PresetNames();
Result<JobSpec> PresetSpec(std::string_view name);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_JOB_SPEC_H_
