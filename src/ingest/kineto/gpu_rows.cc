// SPDX-License-Identifier: Apache-2.0
// LinkGpuOps: a GPU op's launch is the cuda_runtime / cuda_driver call with
// the same correlation id; an NCCL kernel's collective is what the kernel,
// its args and the CPU comm ops around that launch say.

#include <algorithm>
#include <map>
#include <string>

#include "ingest/kineto/comm_nests.h"
#include "ingest/kineto/trace_records.h"

namespace strag::ingest::kineto {
namespace {

using trace::OpType;

// The launch with correlation `correlation` (the earliest one, when a
// runtime call and the driver call under it share the id); null if none.
const LaunchRecord* FindLaunch(const std::vector<LaunchRecord>& sorted,
                               int64_t correlation) {
  const auto it = std::lower_bound(
      sorted.begin(), sorted.end(), correlation,
      [](const LaunchRecord& l, int64_t c) { return l.correlation < c; });
  return it != sorted.end() && it->correlation == correlation ? &*it : nullptr;
}

std::string KindCounts(const std::map<OpType, int64_t>& counts) {
  std::string text;
  for (const auto& [kind, count] : counts) {
    if (!text.empty()) text += ", ";
    text += std::to_string(count) + " " + std::string(trace::OpTypeName(kind));
  }
  return text;
}

struct LinkCounts {
  int64_t rows_without_launch = 0;
  int64_t kernels_without_launch = 0;
  int64_t kernels_outside_comm_ops = 0;
  int64_t kernels_of_unknown_kind = 0;
  std::map<OpType, int64_t> typed_by_cpu_op;  // SendRecv / Generic kernels
};

void Warn(const LinkCounts& c, const TraceRecords& r,
          std::vector<std::string>* warnings) {
  const std::string& src = r.source;
  if (c.rows_without_launch > 0) {
    warnings->push_back(src + ": " + std::to_string(c.rows_without_launch) +
                        " of " + std::to_string(r.out.size()) +
                        " GPU ops have no launch event in the trace "
                        "(launch time unknown)");
  }
  if (c.kernels_without_launch > 0) {
    warnings->push_back(src + ": " + std::to_string(c.kernels_without_launch) +
                        " NCCL kernels have no launch event: what they are "
                        "comes from the kernel alone");
  }
  if (c.kernels_outside_comm_ops > 0) {
    warnings->push_back(src + ": " +
                        std::to_string(c.kernels_outside_comm_ops) +
                        " NCCL kernels were launched outside any CPU "
                        "collective (record_param_comms / nccl:* / c10d::*)");
  }
  if (!c.typed_by_cpu_op.empty()) {
    int64_t total = 0;
    for (const auto& [kind, count] : c.typed_by_cpu_op) total += count;
    warnings->push_back(src + ": " + std::to_string(total) +
                        " NCCL kernels that do not name their collective "
                        "(SendRecv, Generic) are typed after the CPU op that "
                        "launched them (" +
                        KindCounts(c.typed_by_cpu_op) + ")");
  }
  if (c.kernels_of_unknown_kind > 0) {
    warnings->push_back(src + ": " + std::to_string(c.kernels_of_unknown_kind) +
                        " NCCL kernels are of an unknown collective "
                        "(typed other-comm)");
  }
}

// launch_op of every row: the innermost CPU op around its launch (the
// launches of rows `rows`, in that order), all found in one sweep. Left
// empty when no row has one. Frees the CPU ops.
void LinkLaunchOps(const std::vector<CpuOpPoint>& launches,
                   const std::vector<size_t>& rows, TraceRecords* records) {
  TraceRecords& r = *records;
  const std::vector<int64_t> innermost = InnermostCpuOps(&r.cpu_ops, launches);
  std::vector<uint32_t>& launch_op = r.out.launch_op;
  for (size_t k = 0; k < rows.size(); ++k) {
    if (innermost[k] < 0) continue;
    if (launch_op.empty()) {
      launch_op.assign(r.out.size(), trace::RankTrace::kNoLaunchOp);
    }
    launch_op[rows[k]] = r.cpu_ops[static_cast<size_t>(innermost[k])].name;
  }
  r.cpu_ops = {};
}

}  // namespace

void LinkGpuOps(const CommNests& nests, TraceRecords* records) {
  TraceRecords& r = *records;
  std::stable_sort(r.launches.begin(), r.launches.end(),
                   [](const LaunchRecord& a, const LaunchRecord& b) {
                     return a.correlation != b.correlation
                                ? a.correlation < b.correlation
                                : a.ts < b.ts;
                   });
  LinkCounts counts;
  // The launches of rows `launch_rows`, when there are CPU ops to find.
  std::vector<CpuOpPoint> launches;
  std::vector<size_t> launch_rows;
  if (!r.cpu_ops.empty()) {
    launches.reserve(r.out.size());
    launch_rows.reserve(r.out.size());
  }
  for (size_t row = 0; row < r.out.size(); ++row) {
    const int64_t correlation = r.row_correlation[row];
    const LaunchRecord* launch =
        correlation >= 0 ? FindLaunch(r.launches, correlation) : nullptr;
    if (launch != nullptr) {
      r.out.launch_ns[row] = launch->ts;
      // A launch on a thread without CPU ops has none around it.
      const int64_t thread =
          r.cpu_ops.empty() ? -1 : r.FindThreadIndex(launch->thread);
      if (thread >= 0) {
        launches.push_back({static_cast<uint32_t>(thread), launch->ts});
        launch_rows.push_back(row);
      }
    } else {
      ++counts.rows_without_launch;
    }
  }
  LinkLaunchOps(launches, launch_rows, &r);
  // The CPU comm op around each kernel's launch, all found in one sweep.
  std::vector<const LaunchRecord*> launch_of;
  std::vector<ThreadPoint> points;
  launch_of.reserve(r.nccl_kernels.size());
  for (const NcclKernel& kernel : r.nccl_kernels) {
    const int64_t correlation = r.row_correlation[kernel.row];
    launch_of.push_back(correlation >= 0 ? FindLaunch(r.launches, correlation)
                                         : nullptr);
    if (launch_of.back() != nullptr) {
      points.push_back({launch_of.back()->thread, launch_of.back()->ts});
    }
  }
  const std::vector<int64_t> innermost = nests.InnermostOf(points);
  std::vector<bool> linked(nests.ops().size(), false);
  size_t point = 0;
  for (size_t k = 0; k < r.nccl_kernels.size(); ++k) {
    NcclKernel& kernel = r.nccl_kernels[k];
    const LaunchRecord* launch = launch_of[k];
    const int64_t op = launch != nullptr ? innermost[point++] : -1;
    if (launch == nullptr) {
      ++counts.kernels_without_launch;
    } else if (op < 0) {
      ++counts.kernels_outside_comm_ops;
    } else {
      const bool named = kernel.details.has_kind;
      const size_t root = nests.root(static_cast<size_t>(op));
      kernel.details.Fill(nests.Merged(static_cast<size_t>(op)));
      kernel.details.Fill(nests.NestDetails(root));
      linked[root] = true;
      if (!named && kernel.details.has_kind) {
        ++counts.typed_by_cpu_op[kernel.details.kind];
      }
    }
    if (!kernel.details.has_kind) ++counts.kernels_of_unknown_kind;
    r.out.comm[kernel.row] = static_cast<int32_t>(r.out.comms.size());
    r.out.comms.push_back(kernel.details.ToCommOp());
  }
  Warn(counts, r, &r.out.warnings);

  // CPU collectives that launched no kernel of this trace: the trace lost
  // the kernels (or the collective did no GPU work, as with one rank). A
  // nest of unknown kind is no collective (record_param_comms alone also
  // marks the waits on a collective's work).
  std::map<OpType, int64_t> unlinked;
  for (size_t i = 0; i < nests.ops().size(); ++i) {
    const CpuCommOp& op = nests.ops()[i];
    if (nests.root(i) != i || linked[i] || op.family == CpuCommFamily::kGloo) {
      continue;
    }
    const CommDetails details = nests.NestDetails(i);
    if (details.has_kind) ++unlinked[details.kind];
  }
  if (!unlinked.empty()) {
    int64_t total = 0;
    for (const auto& [kind, count] : unlinked) total += count;
    r.out.warnings.push_back(
        r.source + ": " + std::to_string(total) +
        " CPU-side collective calls have no NCCL kernel in the trace (" +
        KindCounts(unlinked) + "): their GPU part is missing");
  }
}

}  // namespace strag::ingest::kineto
