// SPDX-License-Identifier: Apache-2.0
// TraceRecords: what RankTraceBuilder keeps of a Kineto trace while reading
// it (only what the rows and their linking need), and the two ways of
// turning it into RankTrace rows once every event is read: GPU ops linked
// to their launches and CPU collectives (LinkGpuOps), or, in a trace with
// no GPU op, CPU ops and gloo / c10d ops (BuildCpuOnlyRows).

#ifndef STRAG_SRC_INGEST_KINETO_TRACE_RECORDS_H_
#define STRAG_SRC_INGEST_KINETO_TRACE_RECORDS_H_

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ingest/kineto/kineto_names.h"
#include "trace/rank_trace.h"

namespace strag::ingest::kineto {

// A thread as the trace names it. String pids / tids ("CPU functions") get
// ids from kStringIdBase up, so they never equal a number.
struct ThreadKey {
  int64_t pid = 0;
  int64_t tid = 0;
  auto operator<=>(const ThreadKey&) const = default;
};
inline constexpr int64_t kStringIdBase = int64_t{1} << 62;

// What is known about one collective; merged from the kernel, its args and
// the CPU ops around its launch, the first source that knows a field wins.
struct CommDetails {
  bool has_kind = false;
  trace::OpType kind = trace::OpType::kOtherComm;
  int32_t group = -1;  // index into RankTrace::groups
  int64_t seq = -1;
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int32_t group_size = 0;
  int64_t dst_rank = -1;  // "Dst Rank": the peer of a send
  int64_t src_rank = -1;  // "Src Rank": the peer of a recv

  // Takes from `other` the fields this one lacks.
  void Fill(const CommDetails& other);
  // The global rank of the peer of a send / recv, -1 when unknown.
  int32_t Peer() const;
  // As the RankTrace stores it (unknown kind: other-comm).
  trace::CommOp ToCommOp() const;
};

// A CPU-side comm op: record_param_comms, nccl:*, c10d::* or gloo:*.
struct CpuCommOp {
  ThreadKey thread;
  int64_t ts = 0;
  int64_t end = 0;
  CpuCommFamily family = CpuCommFamily::kNone;
  uint32_t name = 0;  // into RankTrace::names
  CommDetails details;
};

// A cpu_op of any kind but gloo (aten::mm, record_param_comms, ...): what
// finding the op that launched a kernel needs of it (24 bytes).
struct CpuOpSpan {
  int64_t ts = 0;
  int64_t end = 0;
  uint32_t thread = 0;  // TraceRecords::ThreadIndex
  uint32_t name = 0;    // into RankTrace::names
};

// A launch on a thread (TraceRecords::ThreadIndex), for InnermostCpuOps.
struct CpuOpPoint {
  uint32_t thread = 0;
  int64_t t = 0;
};

// A cuda_runtime / cuda_driver call with a correlation id.
struct LaunchRecord {
  int64_t correlation = 0;
  int64_t ts = 0;
  ThreadKey thread;
};

struct StepRecord {
  trace::StepSpan span;
  ThreadKey thread;
};

// A cpu_op (or an event without category) that may become a compute row
// of a CPU-only trace; `is_comm` when it is also a CpuCommOp.
struct CpuCandidate {
  ThreadKey thread;
  int64_t ts = 0;
  int64_t end = 0;
  uint32_t name = 0;
  bool is_comm = false;
};

// An NCCL kernel row and what the kernel itself says about it.
struct NcclKernel {
  size_t row = 0;
  CommDetails details;
};

struct TraceRecords {
  std::string source;
  // Rows read so far (GPU ops), names and groups; filled in by the builder.
  trace::RankTrace out;
  std::vector<int64_t> row_correlation;  // per GPU row; -1: none
  std::vector<NcclKernel> nccl_kernels;
  std::vector<LaunchRecord> launches;
  std::vector<CpuCommOp> comm_ops;
  std::vector<StepRecord> steps;
  std::vector<CpuCandidate> candidates;
  std::vector<CpuOpSpan> cpu_ops;  // until Finish (GPU traces use them)
  bool seen_gpu_op = false;
  int64_t cpu_plain = 0;  // cpu_op events that are neither steps nor comm
  std::map<std::string, int64_t> skipped;

  uint32_t Intern(std::string_view name);
  // The group named `name` (created when new), with `desc` and `ranks`
  // filled in where it had none.
  int32_t GroupIndex(std::string_view name, std::string_view desc,
                     const std::vector<int32_t>* ranks);
  // CUDA stream ids, or thread ids in CPU-only traces, as int32: values
  // that do not fit (string tids, huge ids) get ids from 2^30 up.
  int32_t StreamId(int64_t id);
  // A small id per thread of CPU ops (0, 1, ... in order of first use);
  // FindThreadIndex: -1 for a thread without one.
  uint32_t ThreadIndex(const ThreadKey& thread);
  int64_t FindThreadIndex(const ThreadKey& thread) const;
  void Skip(const std::string& reason, int64_t count = 1);

 private:
  // Looked up by string_view: no string is built for a name already seen.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
  };
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>>
      name_index_;
  // The index of a name interned lately, by a fingerprint of the text (its
  // length and first and last 8 bytes), checked against the name itself: a
  // hit costs one compare instead of hashing the whole text (kernel names
  // run to hundreds of bytes, and an op's name comes with every event).
  std::array<uint32_t, 64> recent_names_{};  // index + 1; 0: none
  std::unordered_map<std::string, int32_t> group_index_;
  std::map<int64_t, int32_t> big_streams_;
  std::map<ThreadKey, uint32_t> thread_index_;
  ThreadKey last_thread_;  // of the last ThreadIndex call, and its index
  uint32_t last_thread_index_ = UINT32_MAX;
};

class CommNests;

// GPU trace: sets launch_ns of every row from its correlation, launch_op
// from the innermost of `records->cpu_ops` around that launch, and builds
// the CommOp of every NCCL kernel from the kernel, its args and the CPU
// comm ops around its launch; warns about what cannot be linked.
void LinkGpuOps(const CommNests& nests, TraceRecords* records);

// CPU-only trace: compute rows from the top-level CPU ops of the step
// threads, comm rows from gloo ops (launched by the k-th c10d op of their
// kind) or else from the outermost CPU comm ops.
void BuildCpuOnlyRows(const CommNests& nests, TraceRecords* records);

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_TRACE_RECORDS_H_
