// SPDX-License-Identifier: Apache-2.0
#include "diagnose/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "base/f32.h"
#include "base/parallel_for.h"
#include "base/str_format.h"
#include "diagnose/detectors.h"

namespace strag::diagnose {
namespace {

constexpr double kMinConfidence = 0.2;  // below: not reported
// Below this, a finding is listed but not called the probable cause: on a
// noisy but balanced job (e.g. 4 processes sharing 2 cores) every detector
// sees a little of its signal, up to ~0.35; real stragglers score >= 0.6.
constexpr double kMinProbable = 0.4;
// S (or S x launch slowdown) below this is a failed model, not a result.
constexpr double kMinPlausibleS = 0.995;

double Percentile90(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = 0.9 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// Persistence of what the report names: the share of the steps in which
// the straggler shows its cause (the finding's own per-step measure, else
// the steps in which it is the worker waited for); for a job without a
// straggler, the P90 of the per-step slowdown over S.
void Persistence(const whatif::WhatIfResult& r, Diagnosis* d) {
  std::vector<double> normalised;
  for (double s : r.slowdown_per_step) normalised.push_back(s / r.slowdown);
  d->persistence_p90 = Percentile90(normalised);
  d->persistent = d->persistence_p90 <= 1.06;
  d->persistence_known = r.steps.size() >= 2;
  const int32_t rank = d->largest_straggler.rank;
  if (rank < 0) return;
  for (const whatif::WorkerScore& w : r.workers) {
    if (w.rank == rank) d->worst_worker_share = WorstWorkerShare(r, w);
  }
  double share = d->worst_worker_share;
  const Finding& top = d->findings.front();
  if (top.step_share >= 0 &&
      std::find(top.ranks.begin(), top.ranks.end(), rank) != top.ranks.end()) {
    share = top.step_share;
  }
  d->persistent = share >= 0.5;
}

void Split(const whatif::WhatIfResult& r, Diagnosis* d) {
  double compute = 0, comm = 0;
  for (size_t g = 0; g < r.by_optype.keys.size(); ++g) {
    const double excess = std::max(0.0, r.by_optype.slowdown[g] - 1);
    const std::string& k = r.by_optype.keys[g];
    if (k == "forward-compute" || k == "backward-compute" || k == "optimizer" ||
        k == "gc" || k == "compute") {
      compute += excess;
    } else {
      comm += excess;
    }
  }
  const double total = compute + comm;
  d->compute_share = total > 0 ? compute / total : 0;
  d->communication_share = total > 0 ? comm / total : 0;
}

// "TP group 1840-1847, PP stage 3, DP replica 38, node 230"; for profiler
// traces "rank 12 (PP stage 3, DP replica 0), node 1", or "rank 12, node 1"
// when each rank is its own replica.
std::string Scope(const TraceEvidence& t, const Straggler& s,
                  const DiagnoseOptions& options) {
  const int32_t tp_size = options.tp;
  const std::string node =
      !s.host.empty() ? "host " + s.host
      : options.gpus_per_node_assumed
          ? StrFormat("node %d (if %d ranks per node)", s.node,
                      options.gpus_per_node)
          : "node " + std::to_string(s.node);
  const std::string where = "PP stage " + std::to_string(s.pp) +
                            ", DP replica " + std::to_string(s.dp);
  if (t.layout == whatif::Layout::kRanks) {
    const bool layout = t.topology.known && t.topology.pp > 1;
    return "rank " + std::to_string(s.rank) +
           (layout ? " (" + where + ")" : "") + ", " + node;
  }
  const int32_t tp = std::max(1, tp_size);
  return "TP group " + std::to_string(s.rank) +
         (tp > 1 ? "-" + std::to_string(s.rank + tp - 1) : "") + ", " + where +
         ", " + node;
}

// The worker the probable finding names: for host delays the first of its
// ranks (ordered by their evidence), else the worst-scored of its ranks
// (the ranks of a heavy stage; r.workers is sorted worst first), else the
// worst worker.
whatif::WorkerScore NamedWorker(const whatif::WhatIfResult& r,
                                const Finding& f) {
  const bool host =
      f.cause == Cause::kDataLoading || f.cause == Cause::kHostPause;
  for (const whatif::WorkerScore& x : r.workers) {
    const bool named = host ? !f.ranks.empty() && x.rank == f.ranks.front()
                            : std::find(f.ranks.begin(), f.ranks.end(),
                                        x.rank) != f.ranks.end();
    if (named) return x;
  }
  return r.workers.front();
}

}  // namespace

std::string_view CauseName(Cause cause) {
  switch (cause) {
    case Cause::kNone:
      return "none";
    case Cause::kFaultyWorker:
      return "faulty_worker";
    case Cause::kStageImbalance:
      return "stage_imbalance";
    case Cause::kSequenceLengthImbalance:
      return "sequence_length_imbalance";
    case Cause::kHostPause:
      return "host_pause";
    case Cause::kCommunication:
      return "communication";
    case Cause::kDataLoading:
      return "data_loading";
  }
  return "none";
}

Diagnosis Diagnose(const whatif::PreparedTrace& t,
                   const whatif::WhatIfResult& r,
                   const DiagnoseOptions& options) {
  return Diagnose(EvidenceOf(t, options.threads), r, options);
}

Diagnosis Diagnose(const TraceEvidence& t, const whatif::WhatIfResult& r,
                   const DiagnoseOptions& options) {
  Diagnosis d;
  const Finding healthy = DetectHealthy(r);
  // On equal confidence the earlier wins: stages and microbatches before
  // host delays, and persistent late starts are data loading before they
  // are host pauses.
  // The detectors that scan the trace run side by side (each is pure).
  using Detector =
      Finding (*)(const TraceEvidence&, const whatif::WhatIfResult&);
  static constexpr Detector kTraceDetectors[] = {
      DetectStageImbalance, DetectSequenceLengthImbalance, DetectDataLoading,
      DetectHostPause};
  constexpr size_t kNumTrace = std::size(kTraceDetectors);
  std::vector<Finding> all(2 + kNumTrace);
  all[0] = DetectFaultyWorker(r);
  const size_t threads =
      options.threads == 0 ? HardwareThreads() : options.threads;
  ParallelFor(kNumTrace, std::min(threads, kNumTrace),
              [&](size_t k, size_t /*worker*/) {
                all[1 + k] = kTraceDetectors[k](t, r);
              });
  all[1 + kNumTrace] = DetectCommunication(r);
  std::stable_sort(all.begin(), all.end(),
                   [](const Finding& a, const Finding& b) {
                     return a.confidence > b.confidence;
                   });
  if (healthy.confidence > 0) d.findings.push_back(healthy);
  for (Finding& f : all) {
    if (f.confidence >= kMinConfidence) d.findings.push_back(std::move(f));
  }
  d.probable_cause =
      d.findings.empty() || d.findings.front().confidence < kMinProbable
          ? Cause::kNone
          : d.findings.front().cause;

  // Without a probable cause the slowest worker is noise: none is named.
  // A near-healthy job (the healthy finding first) whose residual one
  // finding still pins on workers with a probable's confidence (slowest in
  // most steps, most of the excess) has a culprit: it is named, the cause
  // stays none.
  const Finding* named = nullptr;
  if (d.probable_cause != Cause::kNone) {
    named = &d.findings.front();
  } else if (d.findings.size() > 1 && d.findings.front().cause == Cause::kNone &&
             d.findings[1].confidence >= kMinProbable) {
    named = &d.findings[1];
  }
  if (!r.workers.empty() && named != nullptr) {
    const whatif::WorkerScore w = NamedWorker(r, *named);
    const trace::RankPlace* place = t.topology.Find(w.rank);
    const bool hosts = place && !t.topology.hosts.empty();
    d.largest_straggler = {
        w.rank, place ? place->dp : w.dp, place ? place->pp : w.pp, 0,
        hosts ? place->node : w.rank / std::max(1, options.gpus_per_node),
        hosts ? t.topology.HostOf(place->node) : std::string()};
    d.scope = Scope(t, d.largest_straggler, options);
  }
  // After the straggler is named: its DP replica's share of slow steps.
  AddMeasuredFacts(r, &d);
  // The replay bounds the trace from below: S < 1 (utilization above 100%)
  // means the ideal does not describe this job, never a faster-than-ideal
  // job.
  if (r.slowdown < kMinPlausibleS ||
      r.slowdown * r.launch_slowdown < kMinPlausibleS) {
    WithoutDiagnosis(
        StrFormat("the model failed: S = %.3f and S x launch slowdown = %.3f "
                  "(below 1: the ideal step is slower than the traced one, so "
                  "the ops pooled into one ideal value do different work)",
                  r.slowdown, r.slowdown * r.launch_slowdown),
        &d);
  }
  return d;
}

void AddMeasuredFacts(const whatif::WhatIfResult& r, Diagnosis* d) {
  const double observed = PairwiseMean(r.step_t_observed);
  const double replayed = PairwiseMean(r.step_t_replayed);
  const double ideal = PairwiseMean(r.step_t_ideal);
  d->excess_step_time_ms = 1e3 * (observed - ideal);
  const double blocking = std::max(0.0, replayed - ideal);
  const double launch = std::max(0.0, observed - replayed);
  d->blocking_share =
      blocking + launch > 0 ? blocking / (blocking + launch) : 1.0;
  d->dominant_cause = d->blocking_share >= 0.5
                          ? "synchronization waiting (blocking)"
                          : "host-side launch delays";
  Persistence(r, d);
  Split(r, d);
  const auto worst =
      std::max_element(r.slowdown_per_step.begin(), r.slowdown_per_step.end());
  if (worst != r.slowdown_per_step.end()) {
    d->worst_step =
        r.steps[static_cast<size_t>(worst - r.slowdown_per_step.begin())];
  }
}

void WithoutDiagnosis(const std::string& reason, Diagnosis* d) {
  d->findings.clear();
  d->probable_cause = Cause::kNone;
  d->dominant_cause = "unknown: " + reason;
  d->largest_straggler = {};
  d->scope.clear();
  d->worst_worker_share = 0;
}

const char* PersistenceWord(const Diagnosis& d) {
  if (!d.persistence_known) return "unknown (one step)";
  return d.persistent ? "persistent" : "transient";
}

void AddWorstStep(const whatif::Timeline& t, Diagnosis* d) {
  const whatif::TimelineOp* compute = nullptr;
  const whatif::TimelineOp* comm = nullptr;
  auto excess = [](const whatif::TimelineOp& op) {
    return (op.end_s - op.start_s) - (op.ideal_end_s - op.ideal_start_s);
  };
  for (const whatif::TimelineOp& op : t.ops) {
    const whatif::TimelineOp*& best = op.comm ? comm : compute;
    if (best == nullptr || excess(op) > excess(*best)) best = &op;
  }
  auto describe = [&](const whatif::TimelineOp& op) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s #%d of %s in step %lld: %.2f ms, "
                  "%+.2f ms over ideal",
                  std::string(trace::OpTypeName(op.type)).c_str(), op.seq_id,
                  whatif::WorkerLabel(t.layout, op.rank, op.dp, op.pp).c_str(),
                  static_cast<long long>(t.step), 1e3 * (op.end_s - op.start_s),
                  1e3 * excess(op));
    return std::string(buf);
  };
  if (compute) d->worst_microbatch = describe(*compute);
  if (comm) d->worst_collective = describe(*comm);
}

}  // namespace strag::diagnose
