// SPDX-License-Identifier: Apache-2.0
#include "sim/footprint.h"

#include <algorithm>

namespace strag::sim {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Saturating arithmetic on non-negative counts.
int64_t Mul(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? kMax : out;
}
int64_t Add(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? kMax : out;
}

// Bytes per op, measured as peak resident size (/usr/bin/time -v, Release
// build, 2026-12) of `strag simulate` on the presets and on specs built to
// isolate one term (one step written of many, one long pipeline, many
// sequences per microbatch, wide DP), rounded up. The sum was 1.2-1.6x the
// measured peak on 29 runs above 100 MB (presets, random specs, those
// specs; up to 2.9x on tiny jobs), never below it:
// - the process itself (binary, libraries, allocator): 7-10 MiB;
constexpr int64_t kProcessBytes = int64_t{16} << 20;
// - per op of one step of one replica (the schedule's dependency model,
//   built once): 50-70 bytes (pp 4, 200,000 microbatches, one step: 4.0 M
//   ops in 1.40 GB with --out);
constexpr int64_t kScheduleBytesPerOp = 96;
// - per simulated op: cost (8), launch delay (4), replayed start and end
//   (16 with --out, else the binary32 start, 4) and the truth replays'
//   second cost and delay (12): 26-33 bytes measured with --out (llama-16k
//   with --steps-window 0:0: 7.8 M ops in 338 MB, 389 k of them written);
constexpr int64_t kSimulateBytesPerOp = 40;
constexpr int64_t kSimulateNoTimesBytesPerOp = 28;
// - per written op: the ops table (61 bytes and a 32-byte seq_lens
//   string), the CSV text (70-80 bytes a row, in a string grown by
//   doubling: up to twice that) and its gzip (17), or the Kineto export:
//   222-272 bytes (whole job minus --steps-window 0:0 of
//   article-hybrid-4096, llama-16k, DP 16384, PP 64 x 256 microbatches), up
//   to 320 (DP 8 x PP 4 x 32 microbatches x 200 steps, times of 1e3 s);
constexpr int64_t kWriteBytesPerOp = 336;
// - per analysed op, `--analyze`: in process, on the simulator's own
//   arrays, 10-25 bytes (llama-16k: 289 MB for 7.8 M ops in all); on the
//   table read back from what was written, 140 bytes (`strag analyze` of
//   article-hybrid-4096 and PP 64 x 256 microbatches). Plus its own
//   dependency model: about 200 bytes per op of a step (PP 4 x 200,000
//   microbatches, one step: 4.0 M ops in 1.25 GB), and one byte per (DP
//   rank, lane) for the what-if decomposition by DP rank (its selections
//   are all built up front: DP 16384 x 5 steps, 1.36 GB);
constexpr int64_t kAnalyzeInProcessBytesPerOp = 24;
constexpr int64_t kAnalyzeTableBytesPerOp = 160;
constexpr int64_t kAnalyzeModelBytesPerOp = 224;
// - per replay running (the simulator's one, each analysis thread): its
//   window of start / end rows, 16 bytes per (op of a step, lane) over
//   whole steps of at most 64 lanes or one step (replay_engine.cc; PP 64 x
//   256 microbatches x DP 2 analysed on 2 threads: about 3 x 60 MB);
constexpr int64_t kReplayWindowLanes = 64;
constexpr int64_t kReplayBytesPerOpLane = 16;
// - per (lane, microbatch): its vector of sequence lengths (24 bytes, a heap
//   block of 16 + 8 n) and its sequence factor (8);
constexpr int64_t kSequenceVectorBytes = 48;
// - per written compute op whose seq_lens text is longer than a short
//   string (15 characters): the text in the table, in the CSV and read back
//   for the analysis, 3 copies of n (digits + 1) bytes (2.6 measured for
//   64 lognormal lengths per microbatch).
constexpr int64_t kSequenceTextCopies = 3;
constexpr int64_t kShortString = 15;
// A streamed write (SimulateInWindows) holds one window's per-op arrays and
// sequences, and per step its span and step time, the truth replays' step
// times and steps acted on (8 bytes each per injection) and truth.json's
// text of the step times (about 30 bytes);
constexpr int64_t kStreamStepBytes = 64;
constexpr int64_t kStreamInjectionStepBytes = 24;
// its writer: the batch of rows (4096, about 200 bytes each), the text
// being filled and, per compressing thread and 2 more, a chunk of text and
// its compressed bytes (8 MiB + up to 8 MiB/64 + 1 KiB, at most half of it
// once compressed), with capacities grown by doubling: about 2.5 chunks.
constexpr int64_t kStreamWriterBytes = int64_t{24} << 20;
constexpr int64_t kStreamWriterBytesPerThread = int64_t{20} << 20;

int64_t Digits(int64_t v) {
  int64_t d = 1;
  for (; v >= 10; v /= 10) ++d;
  return d;
}

// The longest sequence length the job can draw (for the width of its text).
int64_t LongestSequence(const SequenceSection& seq) {
  switch (seq.kind) {
    case SequenceSection::Kind::kFixed:
      return seq.length;
    case SequenceSection::Kind::kLognormal:
      return seq.max;
    case SequenceSection::Kind::kFile:
      if (seq.lengths.empty()) return kMax;  // not loaded: assume the widest
      return *std::max_element(seq.lengths.begin(), seq.lengths.end());
  }
  return kMax;
}

// The bytes a window of one step holds: per-op arrays and sequences.
int64_t StepBytes(const JobSpec& spec, int64_t ops_per_step, int64_t replicas) {
  const int64_t m = std::max(spec.job.microbatches, 1);
  const int64_t n = std::max(spec.sequences.per_microbatch, 1);
  return Add(Mul(Mul(ops_per_step, replicas), kSimulateBytesPerOp),
             Mul(Mul(replicas, m), Add(kSequenceVectorBytes, Mul(n, 8))));
}

}  // namespace

int64_t StreamWindowSteps(const JobSpec& spec, int64_t window_bytes) {
  const JobSection& j = spec.job;
  const int64_t replicas =
      std::max<int64_t>(int64_t{j.dp} + j.backup_workers, 1);
  const int64_t per_step = StepBytes(
      spec,
      OpsPerStep(j.pp, j.vpp, j.microbatches,
                 Mul(replicas, std::max(j.cp, 1)) > 1),
      replicas);
  return std::clamp<int64_t>(window_bytes / std::max<int64_t>(per_step, 1), 1,
                             std::max<int64_t>(j.steps, 1));
}

// 1F1B, per stage: 2m computes, the post-compute chain (gc, layernorm
// all-reduce, clipping, optimizer: 4) and with DP the params all-gather and
// the grads reduce-scatter; between two neighbouring stages 4m transfers
// (forward send and backward recv on the upstream stage, forward recv and
// backward send on the downstream one); the embedding all-reduce on the
// first and the last stage (one stage when pp is 1). Interleaved: a recv,
// a compute and a send for each forward and backward of each (microbatch,
// chunk) on every stage, and one all-gather and one reduce-scatter per
// chunk (megatron_schedule.cc).
int64_t OpsPerStep(int32_t pp, int32_t vpp, int32_t microbatches,
                   bool with_dp) {
  const int64_t p = std::max(pp, 1), v = std::max(vpp, 1),
                m = std::max(microbatches, 1), dp = with_dp ? 1 : 0;
  const int64_t embedding = p == 1 ? 1 : 2;
  if (v > 1) {
    const int64_t per_stage = Add(Mul(6, Mul(m, v)), Add(4, 2 * v * dp));
    return Add(Mul(p, per_stage), embedding);
  }
  const int64_t per_stage = Add(Mul(2, m), 4 + 2 * dp);
  return Add(Add(Mul(p, per_stage), Mul(Mul(4, m), p - 1)), embedding);
}

Footprint EstimateFootprint(const JobSpec& spec,
                            const FootprintOptions& options) {
  const JobSection& j = spec.job;
  const int64_t replicas =
      std::max<int64_t>(int64_t{j.dp} + j.backup_workers, 1);
  const int64_t steps = std::max<int64_t>(options.steps.value_or(j.steps), 1);
  const int64_t m = std::max(j.microbatches, 1);
  const int64_t n = std::max(spec.sequences.per_microbatch, 1);
  const bool stream = options.write && options.stream_window_steps > 0;
  Footprint f;
  f.ops_per_step = OpsPerStep(j.pp, j.vpp, j.microbatches,
                              Mul(replicas, std::max(j.cp, 1)) > 1);
  f.lanes = Mul(steps, replicas);
  f.ops = Mul(f.ops_per_step, f.lanes);
  // One replay's window: whole steps of at most 64 lanes, or one step.
  const int64_t window_lanes =
      replicas > kReplayWindowLanes
          ? replicas
          : std::min(f.lanes, kReplayWindowLanes / replicas * replicas);
  const int64_t replay_bytes =
      Mul(Mul(f.ops_per_step, window_lanes), kReplayBytesPerOpLane);
  const int64_t held_steps =
      stream ? std::min(options.stream_window_steps, steps) : steps;
  const int64_t held_lanes = Mul(held_steps, replicas);
  f.simulate_bytes =
      Add(Add(kProcessBytes, Mul(f.ops_per_step, kScheduleBytesPerOp)),
          Add(Mul(Mul(f.ops_per_step, held_lanes),
                  options.write ? kSimulateBytesPerOp
                                : kSimulateNoTimesBytesPerOp),
              replay_bytes));
  if (stream) {
    const int64_t per_step = Add(
        kStreamStepBytes,
        Mul(static_cast<int64_t>(spec.stragglers.size()),
            kStreamInjectionStepBytes));
    f.simulate_bytes = Add(f.simulate_bytes, Mul(steps, per_step));
  }

  const int64_t per_lane = Mul(m, n);
  f.sequence_lengths = Mul(held_lanes, per_lane);
  f.sequence_bytes =
      Mul(Mul(held_lanes, m), Add(kSequenceVectorBytes, Mul(n, 8)));

  int64_t analysed_lanes = f.lanes;
  if (options.write) {
    const int64_t first = std::clamp<int64_t>(options.first_step, 0, steps);
    const int64_t last = std::clamp<int64_t>(options.last_step, -1, steps - 1);
    const int64_t written_steps = std::max<int64_t>(last - first + 1, 0);
    const int64_t written_lanes = Mul(written_steps, replicas);
    f.written_ops = Mul(f.ops_per_step, written_lanes);
    f.write_bytes =
        stream ? Add(kStreamWriterBytes,
                     Mul(std::max<int64_t>(options.threads, 1),
                         kStreamWriterBytesPerThread))
               : Mul(f.written_ops, kWriteBytesPerOp);
    // The seq_lens text of each written compute op (2 per microbatch and
    // chunk on every stage).
    const int64_t text = Mul(n, Digits(LongestSequence(spec.sequences)) + 1);
    if (text > kShortString) {
      const int64_t computes = Mul(Mul(Mul(2, m), std::max(j.vpp, 1)),
                                   Mul(std::max(j.pp, 1), written_lanes));
      // Streamed, only the table read back for the analysis holds it.
      const int64_t copies =
          !stream ? kSequenceTextCopies : (options.analyze ? 1 : 0);
      f.sequence_bytes =
          Add(f.sequence_bytes, Mul(Mul(computes, Add(text, 16)), copies));
    }
    analysed_lanes = written_lanes;
  }
  if (options.analyze) {
    const int64_t analysed_ops = Mul(f.ops_per_step, analysed_lanes);
    // The decomposition by DP rank, with a quarter of headroom (1.0 byte
    // measured per (DP rank, lane)).
    const int64_t by_dp = Mul(replicas, Add(analysed_lanes, f.ops_per_step));
    f.analyze_bytes =
        Add(Add(Mul(analysed_ops, options.write ? kAnalyzeTableBytesPerOp
                                                : kAnalyzeInProcessBytesPerOp),
                Mul(f.ops_per_step, kAnalyzeModelBytesPerOp)),
            Add(Add(by_dp, by_dp / 4),
                Mul(std::max<int64_t>(options.threads, 1), replay_bytes)));
  }
  // The write and the analysis follow each other (the analysis of what was
  // written reads it back after the write buffers are gone).
  f.bytes = Add(Add(f.simulate_bytes, f.sequence_bytes),
                std::max(f.write_bytes, f.analyze_bytes));
  return f;
}

}  // namespace strag::sim
