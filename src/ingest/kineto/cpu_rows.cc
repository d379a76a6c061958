// SPDX-License-Identifier: Apache-2.0
// BuildCpuOnlyRows: the rows of a trace without GPU ops (gloo jobs on
// CPUs): compute = the top-level CPU ops of the threads that run the
// ProfilerStep spans (the spans' children); communication = the gloo ops
// on gloo's worker threads, or the outermost CPU comm ops when there are
// none.

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ingest/kineto/comm_nests.h"
#include "ingest/kineto/trace_records.h"

namespace strag::ingest::kineto {
namespace {

using trace::OpType;

void AddRow(TraceRecords* r, int64_t ts, int64_t end, int64_t launch,
            int64_t tid, uint32_t name, int32_t comm) {
  trace::RankTrace& out = r->out;
  out.start_ns.push_back(ts);
  out.dur_ns.push_back(end - ts);
  out.launch_ns.push_back(launch);
  out.stream.push_back(r->StreamId(tid));
  out.comm.push_back(comm);
  out.name.push_back(name);
}

int32_t AddComm(TraceRecords* r, const CommDetails& d) {
  r->out.comms.push_back(d.ToCommOp());
  return static_cast<int32_t>(r->out.comms.size() - 1);
}

// The profiler marks every step with a zero-length `aten::empty` at the
// span's start (torch.profiler's step(), not the job): as a compute row it
// would hide a host gap at the start of the step (data loading) inside the
// first segment.
bool IsStepMarker(const TraceRecords& r, const CpuCandidate& op,
                  const std::set<std::pair<ThreadKey, int64_t>>& step_starts) {
  constexpr int64_t kNearNs = 2000;
  if (op.end != op.ts || r.out.names[op.name] != "aten::empty") return false;
  const auto it = step_starts.upper_bound({op.thread, op.ts});
  if (it == step_starts.begin()) return false;
  const auto& [thread, start] = *std::prev(it);
  return thread == op.thread && op.ts - start <= kNearNs;
}

// Compute rows: on each step thread, the candidates not inside another
// non-comm candidate (the step spans themselves are no candidates), less
// the comm ops and the profiler's step markers.
int64_t AddComputeRows(TraceRecords* r) {
  std::set<ThreadKey> step_threads;
  std::set<std::pair<ThreadKey, int64_t>> step_starts;
  for (const StepRecord& step : r->steps) {
    step_threads.insert(step.thread);
    step_starts.insert({step.thread, step.span.start_ns});
  }
  int64_t markers = 0;
  if (step_threads.empty() && !r->candidates.empty()) {
    r->out.warnings.push_back(r->source +
                              ": no ProfilerStep spans: compute rows are the "
                              "top-level CPU ops of every thread");
  }
  std::vector<CpuCandidate>& ops = r->candidates;
  std::stable_sort(ops.begin(), ops.end(),
                   [](const CpuCandidate& a, const CpuCandidate& b) {
                     if (a.thread != b.thread) return a.thread < b.thread;
                     if (a.ts != b.ts) return a.ts < b.ts;
                     return a.end > b.end;
                   });
  int64_t rows = 0;
  const CpuCandidate* top = nullptr;
  for (const CpuCandidate& op : ops) {
    if (!step_threads.empty() && step_threads.count(op.thread) == 0) continue;
    // Comm ops are rows of their own and contain no compute: an isend's
    // gloo span lasts until its wait(), over the compute of the meantime.
    if (op.is_comm) continue;
    if (top != nullptr && top->thread == op.thread &&
        (op.ts < top->end || op.ts == top->ts)) {
      continue;  // inside the current top-level op
    }
    top = &op;
    if (IsStepMarker(*r, op, step_starts)) {
      ++markers;
      continue;
    }
    AddRow(r, op.ts, op.end, -1, op.thread.tid, op.name, -1);
    ++rows;
  }
  r->Skip("profiler's step marker (aten::empty at a step's start)", markers);
  return rows + markers;
}

// gloo ops run on gloo's threads; the c10d op on the training thread that
// queued the k-th gloo op of a kind is the k-th c10d op of that kind.
void AddGlooRows(const CommNests& nests, const std::vector<size_t>& gloo,
                 TraceRecords* r) {
  const std::vector<CpuCommOp>& ops = nests.ops();
  const auto kind_of = [&](const CommDetails& d) {
    return d.has_kind ? d.kind : OpType::kOtherComm;
  };
  const auto by_time = [&](size_t a, size_t b) {
    return ops[a].ts != ops[b].ts ? ops[a].ts < ops[b].ts : a < b;
  };
  std::map<OpType, std::vector<size_t>> launchers;
  std::map<OpType, std::vector<size_t>> works;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (nests.root(i) != i || ops[i].family == CpuCommFamily::kGloo) continue;
    const CommDetails details = nests.NestDetails(i);
    if (details.has_kind) launchers[details.kind].push_back(i);
  }
  for (size_t g : gloo) works[kind_of(ops[g].details)].push_back(g);
  int64_t unlaunched = 0;
  for (auto& [kind, list] : works) {
    std::vector<size_t>& calls = launchers[kind];
    std::sort(list.begin(), list.end(), by_time);
    std::sort(calls.begin(), calls.end(), by_time);
    for (size_t k = 0; k < list.size(); ++k) {
      const CpuCommOp& op = ops[list[k]];
      CommDetails details = nests.Merged(list[k]);
      int64_t launch = -1;
      if (k < calls.size()) {
        details.Fill(nests.NestDetails(calls[k]));
        launch = ops[calls[k]].ts;
      } else {
        ++unlaunched;
      }
      AddRow(r, op.ts, op.end, launch, op.thread.tid, op.name,
             AddComm(r, details));
    }
    if (calls.size() > list.size()) {
      r->out.warnings.push_back(
          r->source + ": " + std::to_string(calls.size()) + " CPU " +
          std::string(trace::OpTypeName(kind)) + " calls but " +
          std::to_string(list.size()) + " gloo ops: the last " +
          std::to_string(calls.size() - list.size()) +
          " calls have no gloo op in the trace");
    }
  }
  if (unlaunched > 0) {
    r->out.warnings.push_back(r->source + ": " + std::to_string(unlaunched) +
                              " gloo ops have no c10d op that queued them "
                              "(launch time unknown)");
  }
}

// An isend's gloo span runs on the calling thread from the post to its
// wait(), while the thread computes on: as a transfer it would last until
// the wait. A send whose span holds the start of a compute row of its
// thread is async: it ends where the thread went on (the post returned).
// Nothing waits on a send but its own wait(), and its receiver's rendezvous
// still starts at the post. Rows from `first_comm` on are the comm rows.
void ClipAsyncSends(size_t first_comm, TraceRecords* r) {
  trace::RankTrace& out = r->out;
  std::map<int32_t, std::vector<int64_t>> compute_starts;  // per thread
  for (size_t row = 0; row < first_comm; ++row) {
    compute_starts[out.stream[row]].push_back(out.start_ns[row]);
  }
  for (auto& [thread, starts] : compute_starts) {
    std::sort(starts.begin(), starts.end());
  }
  int64_t clipped = 0;
  for (size_t row = first_comm; row < out.size(); ++row) {
    const int32_t c = out.comm[row];
    if (c < 0 || out.comms[static_cast<size_t>(c)].kind != OpType::kSend) {
      continue;
    }
    const auto it = compute_starts.find(out.stream[row]);
    if (it == compute_starts.end()) continue;
    const int64_t start = out.start_ns[row], end = start + out.dur_ns[row];
    const auto next =
        std::upper_bound(it->second.begin(), it->second.end(), start);
    if (next == it->second.end() || *next >= end) continue;
    out.dur_ns[row] = *next - start;
    out.comms[static_cast<size_t>(c)].async_post = true;
    ++clipped;
  }
  if (clipped > 0) {
    out.warnings.push_back(r->source + ": " + std::to_string(clipped) +
                           " async gloo sends (isend: the thread computed "
                           "before their wait) end where the thread went on");
  }
}

}  // namespace

void BuildCpuOnlyRows(const CommNests& nests, TraceRecords* records) {
  TraceRecords& r = *records;
  const int64_t compute_rows = AddComputeRows(&r);
  r.Skip("CPU op inside another op or off the step threads",
         r.cpu_plain - compute_rows);
  std::vector<size_t> gloo;
  for (size_t i = 0; i < nests.ops().size(); ++i) {
    if (nests.ops()[i].family == CpuCommFamily::kGloo) gloo.push_back(i);
  }
  if (!gloo.empty()) {
    const size_t first_comm = r.out.size();
    AddGlooRows(nests, gloo, &r);
    ClipAsyncSends(first_comm, &r);
    return;
  }
  // No gloo ops (e.g. NCCL traced without its kernels): each outermost CPU
  // comm op of a known collective is a row, launched when it starts.
  int64_t unknown = 0;
  for (size_t i = 0; i < nests.ops().size(); ++i) {
    if (nests.root(i) != i) continue;
    const CpuCommOp& op = nests.ops()[i];
    const CommDetails details = nests.NestDetails(i);
    if (!details.has_kind) {
      ++unknown;
      continue;
    }
    AddRow(&r, op.ts, op.end, op.ts, op.thread.tid, op.name,
           AddComm(&r, details));
  }
  if (unknown > 0) {
    r.out.warnings.push_back(r.source + ": " + std::to_string(unknown) +
                             " CPU comm ops of no known collective (waits?) "
                             "are not rows");
  }
}

}  // namespace strag::ingest::kineto
