// SPDX-License-Identifier: Apache-2.0
// RankTrace: what one rank's profiler trace (Kineto / Chrome trace JSON) says
// about its training steps, reduced to what a dependency model needs.
//
// One row per op on a device timeline: a GPU kernel, memcpy or memset on its
// CUDA / HIP stream, or, in a CPU-only trace, a top-level CPU op on its
// thread. Communication ops point to a `CommOp` with what the trace says
// about the collective. Times are int64 nanoseconds on the rank's own clock
// (the file's timestamps converted exactly, no offset applied): clocks of
// different ranks are aligned later, from matched collectives.

#ifndef STRAG_SRC_TRACE_RANK_TRACE_H_
#define STRAG_SRC_TRACE_RANK_TRACE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace/op_type.h"

namespace strag::trace {

// A process group as `distributedInfo.pg_config` or a collective's args name
// it. `ranks` holds global ranks; empty when the trace does not say.
struct ProcessGroupInfo {
  std::string name;  // "0", "1", ... (`pg_name` / `Process Group Name`)
  std::string desc;  // "default_pg", ... (may be empty)
  std::vector<int32_t> ranks;
};

// A `ProfilerStep#N` span of the training thread.
struct StepSpan {
  int64_t id = 0;  // N
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Host work that the trace names (an annotation or a Python event): the
// host is busy with it, so time it covers that no op covers is host time
// of that kind.
enum class HostKind : uint8_t {
  kDataLoading,  // a DataLoader's __next__ (`enumerate(DataLoader)#...`)
  kGc,           // Python's garbage collector (`gc.collect`, gc events)
};

struct HostSpan {
  HostKind kind = HostKind::kDataLoading;
  int64_t start_ns = 0;  // own clock
  int64_t end_ns = 0;
};

// The input sizes of one CPU op, as the profiler recorded them with
// `record_shapes` (`args["Input Dims"]`): the element count of each input,
// in order, in RankTrace::input_numels[first, first + count); -1 for an
// input without a shape (a scalar, a list, None).
struct InputShape {
  int64_t start_ns = 0;  // own clock
  uint32_t name = 0;     // into RankTrace::names
  uint32_t first = 0;
  uint32_t count = 0;
};

// What the trace says about one communication op. -1 / empty = unknown.
struct CommOp {
  OpType kind = OpType::kOtherComm;  // one of the generic comm types
  int32_t group = -1;                // index into RankTrace::groups
  int64_t seq = -1;                  // sequence number within the group
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int32_t group_size = 0;  // members, when the trace says (else 0)
  int32_t peer = -1;       // global rank of the peer of a send / recv
  // An async send (isend) whose span was cut at its post: nothing on its
  // rank waits on it (only its own wait(), not traced as such).
  bool async_post = false;
};

struct RankTrace {
  std::string source;  // file name, for messages
  int32_t rank = -1;
  int32_t world_size = 0;
  std::string backend;    // "nccl", "gloo", ... (may be empty)
  // Timestamps on a wall clock (baseTimeNanoseconds applied, or epoch-scale
  // times), so that ranks' clocks are comparable as written.
  bool absolute_clock = false;
  bool cpu_only = false;  // ops are CPU ops on threads, not GPU kernels
  std::vector<ProcessGroupInfo> groups;
  std::vector<StepSpan> steps;  // sorted by start

  // Ops, one row each, in no particular order (columns of equal length).
  std::vector<int64_t> start_ns;
  std::vector<int64_t> dur_ns;
  std::vector<int64_t> launch_ns;  // CPU-side launch time; -1 if unknown
  std::vector<int32_t> stream;     // CUDA stream, or thread id (cpu_only)
  std::vector<int32_t> comm;       // index into `comms`; -1 = compute
  std::vector<uint32_t> name;      // index into `names`
  // The CPU op that launched each row (GPU traces): the innermost cpu_op
  // around its cudaLaunchKernel on the launching thread ("aten::mm"), an
  // index into `names`, or kNoLaunchOp. Empty when no row has one (CPU-only
  // traces, traces without cpu_op events), else one per row.
  std::vector<uint32_t> launch_op;
  std::vector<std::string> names;  // interned op names
  std::vector<CommOp> comms;
  std::vector<HostSpan> host_spans;  // named host work, any order
  // Input sizes of CPU ops (record_shapes), any order; empty without them.
  std::vector<InputShape> input_shapes;
  std::vector<int64_t> input_numels;

  // Events read, and what was skipped and why (counted, never fatal), e.g.
  // {"unknown category 'foo'", 12}; and messages about what is missing.
  int64_t events = 0;
  std::vector<std::pair<std::string, int64_t>> skipped;
  std::vector<std::string> warnings;

  size_t size() const { return start_ns.size(); }
  // launch_op of a row, kNoLaunchOp when the column is empty.
  uint32_t LaunchOp(size_t row) const {
    return row < launch_op.size() ? launch_op[row] : kNoLaunchOp;
  }
  static constexpr uint32_t kNoLaunchOp = UINT32_MAX;
};

// Appends `from` (another profiling cycle of the same rank, as
// `schedule(repeat=N)` writes one file per cycle) to `into`: rows, comms,
// process groups (by name), steps, host spans and counts. Fails, changing
// nothing, when the two share a step id (then they are not two cycles) or
// their steps overlap in time (a clock restarted with the cycle).
bool MergeRankTraces(RankTrace&& from, RankTrace* into);

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_RANK_TRACE_H_
