// SPDX-License-Identifier: Apache-2.0
// Kineto export (`strag simulate --format kineto`): an ops table written as
// the per-rank Chrome-trace JSON files that the PyTorch profiler writes
// (`rank-<R>.pt.trace.json`), so that multi-rank GPU traces with a known
// ground truth exercise the Kineto reader and the clock aligner. Layout and
// every convention: docs/formats/kineto-export.md.
//
// Contract, in short:
// - One file per traced worker (one per (dp, stage) of the table). Its
//   Kineto rank is the worker's index in ascending global-rank order, so the
//   files hold ranks 0..N-1 of a world of N (the table's `rank` column, the
//   global rank, is kept in the manifest).
// - Every op becomes GPU kernel events with a `cudaLaunchKernel` on the CPU
//   thread (same `correlation`), except `gc`, a CPU event (the host pause),
//   and the type-2 no-op sends / receives of interleaved schedules (no peer
//   chunk: nothing runs in a real job), which are left out and counted.
//   Communication ops are NCCL kernels on their process group's stream with
//   a `record_param_comms` CPU op around the launch; both carry the args of
//   PyTorch's `saveNcclMeta` (Collective name, Group size, Process Group
//   Name / Description / Ranks, Seq, Src Rank / Dst Rank, ...).
// - Kernel time = kKinetoTimeOriginNs + table start_ns + the rank's clock
//   offset, written as microseconds with exactly three decimals (exact ns).
// Deterministic: the same table, meta and options give byte-identical files.

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_WRITER_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "trace/job_meta.h"
#include "trace/ops_table.h"

namespace strag::ingest {

// NCCL kernel names: kNew = NCCL >= 2.19 (`ncclDevKernel_AllReduce_Sum_bf16_
// RING_LL(ncclDevKernelArgsStorage<4096ul>)`), kOld = earlier releases
// (`ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*, ...)`).
enum class NcclKernelNames : uint8_t { kNew, kOld };

struct KinetoExportOptions {
  NcclKernelNames nccl_names = NcclKernelNames::kNew;
  // Each rank's clock offset, ns, by Kineto rank (the ground truth of the
  // aligner: drawn by the simulator, sim/clock_offsets.h); empty: aligned
  // clocks. How they were drawn is recorded in the manifest.
  std::vector<int64_t> clock_offset_ns = {};
  double max_clock_offset_ms = 0.0;
  uint64_t seed = 1;
  // Compute ops (forward, backward, optimizer) are split into this many
  // back-to-back kernels (1..1000) whose durations sum to the op's.
  int32_t kernels_per_compute = 1;
  // The CUDA device of a rank: global rank mod gpus_per_node.
  int32_t gpus_per_node = 8;
  // As PyTorch does by default: `Process Group Ranks` of groups over 30
  // ranks lists the first 30 then "..." ("[0, 1, ..., 29, ...]"); the full
  // list stays in pg_config. Off: every list in full.
  bool truncate_rank_lists = false;
};

// Timestamps of every file are `kKinetoTimeOriginNs + start_ns + offset`:
// about 11.6 days of a monotonic clock, small enough that a binary64 holds
// every microsecond timestamp to well under a nanosecond.
inline constexpr int64_t kKinetoTimeOriginNs = 1'000'000'000'000'000;

// One traced worker as the export writes it.
struct KinetoWorker {
  int32_t rank = 0;         // Kineto rank (file rank-<rank>...)
  int32_t global_rank = 0;  // the ops table's `rank`
  int32_t dp = 0;
  int32_t stage = 0;
  int32_t device = 0;
  int64_t clock_offset_ns = 0;  // added to every timestamp of its file
};

// What one rank's file holds.
struct KinetoRankStats {
  int64_t kernels = 0;       // kernel events (each with its launch)
  int64_t nccl_kernels = 0;  // of them communication kernels
  int64_t cpu_pauses = 0;    // gc ops, written as CPU events
  int64_t cpu_ops = 0;       // cpu_ops launching a compute kernel
  int64_t shaped_ops = 0;    // of them with "Input Dims" (microbatch tokens)
  int64_t skipped_noop_p2p = 0;
  int64_t steps = 0;  // ProfilerStep#N spans
};

// The export of one ops table: the workers, their process groups and clock
// offsets, computed once; then each rank's file, one at a time.
// Keeps a pointer to `table`, which must outlive it.
class KinetoExport {
 public:
  // Fails (kInvalidInput) on options out of range, generic (Kineto) op
  // types, a (dp, stage) with two global ranks or a global rank with two
  // (dp, stage), or a (dp, stage) of the grid without rows.
  static Result<KinetoExport> Build(const trace::OpsTable& table,
                                    const trace::JobMeta& meta,
                                    const KinetoExportOptions& options);

  // By Kineto rank.
  const std::vector<KinetoWorker>& workers() const { return workers_; }
  const KinetoExportOptions& options() const { return options_; }

  // Appends the file of Kineto rank `rank` (0 <= rank < workers().size())
  // to `*out`. Cost O(n log n) in the rank's ops, memory O(its ops) besides
  // the text.
  KinetoRankStats Render(int32_t rank, std::string* out) const;

 private:
  struct Group {
    std::string desc;
    std::vector<int32_t> ranks;  // Kineto ranks, ascending
    std::string ranks_text;      // "[0, 4, 8]"
    std::string args;            // the collective args common to all ops
  };
  struct Item;
  struct Sink;

  Status FindWorkers(const trace::JobMeta& meta);
  void IndexRows();
  void BuildGroups();
  int32_t AddGroup(std::string desc, std::vector<int32_t> ranks);
  int32_t Worker(int32_t dp, int32_t stage) const {
    return worker_of_[static_cast<size_t>(dp) * static_cast<size_t>(pp_) +
                      static_cast<size_t>(stage)];
  }
  std::vector<Item> Items(int32_t rank, KinetoRankStats* stats) const;
  void AddStepItems(int32_t rank, const std::vector<uint32_t>& rows, size_t a,
                    size_t b, std::vector<Item>* items,
                    KinetoRankStats* stats) const;
  void AssignCpuTimes(std::vector<Item>* items) const;
  bool ValidP2p(size_t row, const std::vector<int32_t>& fwd_chunk,
                const std::vector<int32_t>& bwd_chunk) const;
  void GroupAndPeer(size_t row, int32_t rank, Item* item) const;
  void WriteHeader(int32_t rank, std::string* out) const;
  void WriteItem(const Item& item, int32_t rank, std::vector<int64_t>* seq,
                 Sink* sink, KinetoRankStats* stats) const;

  const trace::OpsTable* table_ = nullptr;
  KinetoExportOptions options_;
  int32_t dp_ = 0, pp_ = 0, vpp_ = 1;
  std::vector<KinetoWorker> workers_;
  std::vector<int32_t> worker_of_;  // [dp * pp + stage] -> Kineto rank
  // Rows of Kineto rank r: rows_[row_begin_[r] .. row_begin_[r + 1]).
  std::vector<uint32_t> rows_;
  std::vector<size_t> row_begin_;
  std::vector<Group> groups_;                    // pg_name = index
  std::vector<std::vector<int32_t>> member_of_;  // per rank, ascending
  int32_t dp_group_base_ = 0, embedding_base_ = 0, tp_base_ = 0;
  // [(dp * pp + sender stage) * 2 + (backward ? 1 : 0)] -> group, -1: none.
  std::vector<int32_t> p2p_group_;
};

// Convenience: Build + Render of one rank.
Result<std::string> RenderKinetoRank(const trace::OpsTable& table,
                                     const trace::JobMeta& meta, int32_t rank,
                                     const KinetoExportOptions& options);

// `clock-offsets.json` (schema "strag.kineto-export/1"): the options, and
// per rank its global rank, (dp, stage), device, clock offset, file name
// (`rank-<R>.pt.trace.json` + `file_suffix`, e.g. ".gz") and `stats[rank]`
// (stats may be empty).
std::string RenderKinetoManifest(const KinetoExport& exported,
                                 const std::vector<KinetoRankStats>& stats,
                                 std::string_view file_suffix);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_WRITER_H_
