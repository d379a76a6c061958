// SPDX-License-Identifier: Apache-2.0
// Kernel detail: why a straggler is slow, op by op. For a rank the
// diagnosis names, its compute segments ("compute #k") in the steps where
// it is slowest are compared, name by name (GPU kernels, or CPU ops in a
// CPU-only trace), with the same segments in the same steps on the median
// rank of its peers (the other ranks of its PP stage), so that "rank 2 is
// slow" becomes "rank 2's GEMM kernels take 40% longer"; in a GPU trace
// that names the CPU op launching each kernel, also CPU op by CPU op with
// its kernels: "rank 2's aten::mm (GEMM kernels) take 40% longer".
//
// Only for profiler input (graph::SegmentOps; an ops CSV names no kernel).
// Pure; cost O(peers x steps x segments + the names of the compared
// segments).

#ifndef STRAG_SRC_REPORT_KERNEL_DETAIL_H_
#define STRAG_SRC_REPORT_KERNEL_DETAIL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "diagnose/diagnosis.h"
#include "graph/generic/segment_ops.h"
#include "trace/topology.h"

namespace strag::report {

// Steps compared per rank: its worst, by compute excess over its peers.
inline constexpr size_t kKernelDetailSteps = 3;
// Ranks explained: the diagnosis' named stragglers, at most this many.
inline constexpr size_t kKernelDetailRanks = 3;

// One op name in one segment, summed over the compared steps.
struct OpExcess {
  std::string name = {};
  int64_t count = 0;         // ops of this name on the rank
  int64_t median_count = 0;  // ... on the median rank
  double total_s = 0;
  double median_total_s = 0;
  double excess_s = 0;  // total_s - median_total_s
  double ratio = 0;     // total_s / median_total_s; 0: none on the median
  // In `launch_ops`: a CPU op's kernels (count: kernels it launched), by
  // excess; empty for a kernel launched outside any CPU op (then `name` is
  // the kernel's).
  std::vector<OpExcess> kernels = {};
};

struct SegmentExcess {
  int32_t segment = 0;  // compute #segment of the rank
  double total_s = 0;   // busy time, summed over the compared steps
  double median_total_s = 0;
  double excess_s = 0;
  std::vector<OpExcess> ops = {};  // every name of either rank, by excess
  // The same kernels by the CPU op that launched them (see
  // KernelDetail::launch_ops), by excess.
  std::vector<OpExcess> launch_ops = {};
};

struct KernelDetail {
  int32_t rank = -1;
  int32_t median_rank = -1;         // the peer it is compared with
  int32_t peers = 0;                // ranks of its stage, itself excluded
  std::vector<int64_t> steps = {};  // step ids compared, ascending
  bool cpu_ops = false;  // names are CPU ops (CPU-only trace), not kernels
  double excess_s = 0;   // compute busy time over the median rank's
  // Where its excess is: the segments with a positive excess (else the
  // largest), by excess, descending.
  std::vector<SegmentExcess> segments = {};
  // Every name over all its compute segments (a kernel that runs in many
  // segments, e.g. one per microbatch, summed), by excess, descending.
  std::vector<OpExcess> ops = {};
  // GPU traces that name the CPU op launching a kernel (RankTrace::
  // launch_op): `ops` grouped by that op, kernels launched outside any op
  // under their own name, over all segments, by excess. Empty otherwise
  // (CPU-only traces, traces without cpu_op events): then `ops` is all.
  std::vector<OpExcess> launch_ops = {};
};

// The ranks to explain: the largest straggler, then the first rank of each
// finding that names one, at most kKernelDetailRanks; none when the
// diagnosis names no straggler.
std::vector<int32_t> RanksToExplain(const diagnose::Diagnosis& diagnosis);

// The detail of each of `ranks` (global ranks). Peers: the ranks of the same
// PP stage in `topology` (every rank when it has no places) with as many
// compute segments. A rank without a peer, or not in `ops`, is skipped.
std::vector<KernelDetail> ExplainRanks(const graph::SegmentOps& ops,
                                       const trace::Topology& topology,
                                       std::span<const int32_t> ranks);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_KERNEL_DETAIL_H_
