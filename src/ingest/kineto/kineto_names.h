// SPDX-License-Identifier: Apache-2.0
// What the names in a Kineto trace mean: collectives (as NCCL kernels,
// c10d / nccl / gloo CPU ops and `Collective name` args spell them), step
// spans, ranks in file names, rank lists in args. Pure string functions.

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_NAMES_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_NAMES_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trace/op_type.h"
#include "trace/rank_trace.h"

namespace strag::ingest::kineto {

// The generic comm type of a collective name in any of its spellings:
// "allreduce", "all_reduce", "AllReduce", "_allgather_base",
// "reduce_scatter_tensor_coalesced", "alltoall_base", "send", "recv_",
// "barrier", ... (case, underscores, a "_base" / "_coalesced" / "_into_
// tensor" decoration do not matter). nullopt when it names no collective we
// know (e.g. "gather", "scatter", "coalesced"): the caller decides.
std::optional<trace::OpType> CollectiveFromName(std::string_view name);

// The family of a CPU-side communication op, from its name.
enum class CpuCommFamily : uint8_t {
  kNone,
  kRecordParamComms,  // "record_param_comms": carries the args
  kNccl,              // "nccl:all_reduce", ...
  kC10d,              // "c10d::allreduce_", ...
  kGloo,              // "gloo:all_reduce", ...: the work on a gloo thread
};
CpuCommFamily CpuCommFamilyOf(std::string_view name);

// The collective a CPU comm op names ("nccl:all_to_all" -> kAllToAll);
// nullopt for record_param_comms and unknown names.
std::optional<trace::OpType> CpuCommCollective(std::string_view name);

// NCCL kernel names, the one table the reader and the writer share:
// kernels start with kNcclKernelPrefix (before NCCL 2.19) or
// kNcclDevKernelPrefix (from 2.19), then the collective they run.
inline constexpr std::string_view kNcclKernelPrefix = "ncclKernel_";
inline constexpr std::string_view kNcclDevKernelPrefix = "ncclDevKernel_";

// A kernel as NCCL names it, in both eras, for what the writer emits:
// `collective` is what the name says (nullopt: SendRecv, whose work is the
// CPU op's send or recv).
struct NcclKernelSpelling {
  std::optional<trace::OpType> collective;
  bool f32;  // the float (fp32) variant; else bf16
  std::string_view before_2_19;
  std::string_view since_2_19;
};
extern const NcclKernelSpelling kNcclKernelSpellings[5];

// True for NCCL / RCCL device kernels: "ncclKernel_..." (before NCCL 2.19)
// and "ncclDevKernel_..." (after).
bool IsNcclKernel(std::string_view name);

// The collective an NCCL kernel name says: "ncclKernel_AllReduce_RING_LL_
// Sum_float(...)", "ncclDevKernel_AllGather_RING_LL(...)" -> kAllGather.
// nullopt for the kernels that carry several kinds of work (SendRecv,
// Generic, ...): their collective is the CPU op's that launched them.
std::optional<trace::OpType> NcclKernelCollective(std::string_view name);

// N of "ProfilerStep#N"; nullopt for other names.
std::optional<int64_t> ProfilerStepId(std::string_view name);

// The host work an annotation or Python event names, if any: a DataLoader's
// next batch ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
// "..._MultiProcessingDataLoaderIter.__next__"), or a garbage collection
// ("gc.collect", "gc", "<built-in method collect of module object ...>",
// "Python GC").
std::optional<trace::HostKind> HostKindOf(std::string_view name);

// The rank a file name says: the digits after the first "rank" that has
// any, with an optional '-' or '_' between ("rank-12.Jul_15.pt.trace.json",
// "rank12.json", "trace_8_rank_1.json", "sampled_rank-3.json.gz"); case
// does not matter; directories are ignored. nullopt when there is none.
std::optional<int32_t> RankFromFileName(std::string_view path);

// The integers of a rank list as the args spell it: "[0, 1, 2]". nullopt
// when anything else is in it.
std::optional<std::vector<int32_t>> ParseRankList(std::string_view text);

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_NAMES_H_
