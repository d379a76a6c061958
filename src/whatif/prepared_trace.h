// SPDX-License-Identifier: Apache-2.0
// PreparedTrace: an ops table turned into what the replay needs.
//
// Builds the Megatron model on the reference instance (DP rank 0, first step),
// lays every row out as (node, instance) with instance = step_index * dp +
// dp_rank, and does the binary32 preprocessing of whatif-spec.md §2 and §4:
// end = fl32(start + dur), launch delays, transfer times (both clamped at
// -10 ms) and the per-step rebase.

#ifndef STRAG_SRC_WHATIF_PREPARED_TRACE_H_
#define STRAG_SRC_WHATIF_PREPARED_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/huge_page_allocator.h"
#include "base/status.h"
#include "graph/megatron/megatron_model.h"
#include "trace/job_meta.h"
#include "trace/ops_table.h"
#include "trace/topology.h"

namespace strag::whatif {

// How workers are laid out. kMegatron: (dp rank, stage) of an ops CSV.
// kRanks: a generic trace (e.g. PyTorch profiler files) whose layout is not
// known: dp = 1, and "stage" s is the s-th traced rank (worker_rank[s]), so
// every per-stage result is a per-rank result.
enum class Layout { kMegatron, kRanks };

// How reports name a worker: "rank 5 (dp 1, stage 1)", or "rank 5" when
// the layout is unknown.
std::string WorkerLabel(Layout layout, int32_t rank, int32_t dp, int32_t pp);

// A traced worker: one (dp rank, stage) pair and its global rank.
struct Worker {
  int32_t rank = 0;
  int32_t dp = 0;
  int32_t pp = 0;
};

// Sequence lengths of every (instance, microbatch), when the input has them
// (an ops CSV's seq_lens column, a simulated job): what the planner balances.
struct SequenceLengths {
  int32_t microbatches = 0;  // per instance; 0: no lengths
  // Lengths of microbatch mb of instance i: lengths[offsets[i * microbatches
  // + mb] .. offsets[i * microbatches + mb + 1]).
  std::vector<uint64_t> offsets;
  std::vector<int32_t> lengths;
  std::vector<int32_t> node_microbatch;  // per node: its microbatch, or -1
  bool empty() const { return microbatches == 0; }
};

struct PreparedTrace {
  Layout layout = Layout::kMegatron;
  graph::MegatronModel model;
  int32_t dp = 0;   // derived: max dp rank + 1
  int32_t pp = 0;   // derived: max stage + 1
  int32_t vpp = 1;  // derived: max chunk of the reference instance + 1
  std::vector<int64_t> steps;        // sorted step ids
  std::vector<Worker> workers;       // sorted by rank
  std::vector<int32_t> worker_rank;  // [dp * pp + stage] -> global rank
  // Where each worker sits in the job (same order as `workers`). For
  // kMegatron the ops CSV's dp and stage; for kRanks the inferred or given
  // layout, while `workers` keep the model's coordinates (dp 0, stage = the
  // rank's index).
  trace::Topology topology;

  // Per (node, instance), layout [node * num_instances() + instance]:
  BigVector<uint32_t> row;  // row of the ops table (empty for kRanks)
  BigVector<float> start;         // rebased traced start, s
  BigVector<float> launch_delay;  // s, clamped
  BigVector<double> cost;  // traced duration (plain) or transfer (comm), s

  std::vector<float> step_t_base;  // per step: traced max end - min start, s

  // Host time the trace attributes by name (profiler traces with DataLoader
  // or GC annotations), s, [worker index * steps + step]; empty when the
  // trace names no such work.
  std::vector<float> data_loading_s;
  std::vector<float> gc_s;
  // Input size per [worker index * steps + step] (elements of the recorded
  // input that grows with the tokens, graph/generic/input_size.h), and
  // where it was read; empty when the trace records no varying shapes.
  std::vector<float> input_size;
  std::string input_size_source;
  SequenceLengths sequences;

  size_t num_nodes() const { return model.keys.size(); }
  size_t num_instances() const {
    return steps.size() * static_cast<size_t>(dp);
  }
  size_t Slot(graph::NodeId v, size_t instance) const {
    return v * num_instances() + instance;
  }
};

// Fails with kInvalidInput naming the step, DP rank and op when the table does
// not fit the model (an op missing or duplicated in an instance, a p2p op
// without its peer, a cycle, ...). The rows are placed and preprocessed on
// `threads` threads (0: one per core), a range of steps each; the result
// and the error are the same for any number.
Result<PreparedTrace> PrepareTrace(const trace::OpsTable& table,
                                   const trace::JobMeta& meta,
                                   size_t threads = 1);

// PrepareTrace for a table the caller will not read again but for its
// microbatches (when it has extra columns: sequence lengths) and extra
// columns: the columns placing does not read (ranks, chunks, nanosecond
// durations where binary32 ones exist, tp, cp, tokens) are released once
// the shape is built, before the slot arrays are allocated (the exact starts
// too, once `start_s32` holds each step's starts rebased in place:
// `starts_rebased`), and the others once the rows are placed, before the
// launch delays are, so that the table and the prepared arrays are not held
// whole at once. The same result and errors as PrepareTrace (on an error
// the table is left as it was then).
Result<PreparedTrace> PrepareTraceReleasing(trace::OpsTable* table,
                                            const trace::JobMeta& meta,
                                            size_t threads = 1);

// A job in windows of steps (whatif::AnalyzeWindows), for jobs too large to
// prepare at once. PrepareShape: the layout, model, steps, workers and
// topology of the whole table, without per-slot arrays. PrepareWindow: the
// steps [first_step, first_step + count) of `shape`, from `rows` (exactly
// their rows, in any order): what PrepareTrace would give for those steps,
// bit for bit, since every per-slot value depends only on its step.
Result<PreparedTrace> PrepareShape(const trace::OpsTable& table,
                                   const trace::JobMeta& meta);
Result<PreparedTrace> PrepareWindow(const PreparedTrace& shape,
                                    const trace::OpsTable& rows,
                                    size_t first_step, size_t count);

// The preprocessing shared by every input (whatif-spec.md §4): from `start`
// (traced, binary32 s) and the traced `end` of every slot and the earliest
// start of every step, derives launch delays and transfer times (into
// `cost` for comm nodes), rebases each step to 0 and fills step_t_base.
// `p->model`, `steps`, `dp`, `start` and `cost` (plain ops) must be set.
// On `threads` threads, a range of steps each (the same result for any).
void PreprocessTraced(const BigVector<float>& end,
                      const std::vector<float>& step_min, PreparedTrace* p,
                      size_t threads = 1);

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_PREPARED_TRACE_H_
