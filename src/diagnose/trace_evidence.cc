// SPDX-License-Identifier: Apache-2.0
#include "diagnose/trace_evidence.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/collective_ops.h"
#include "base/parallel_for.h"

namespace strag::diagnose {
namespace {

using graph::NodeId;
using trace::OpType;

// A pause: a launch delay of at least 5 ms before an op.
constexpr float kPauseS = 0.005f;

bool IsComputeNode(const graph::OpKey& k) {
  return trace::IsCompute(k.type) || k.type == OpType::kCompute;
}

// The (forward, backward) nodes of each microbatch of stage `s`, until the
// first microbatch that lacks one.
std::vector<std::pair<NodeId, NodeId>> PairsOfStage(
    const whatif::PreparedTrace& t, int32_t s) {
  std::vector<std::pair<NodeId, NodeId>> pairs;
  for (int32_t k = 0;; ++k) {
    const int64_t fv = t.model.index.Find({OpType::kForwardCompute, k, s});
    const int64_t bv = t.model.index.Find({OpType::kBackwardCompute, k, s});
    if (fv < 0 || bv < 0) break;
    pairs.emplace_back(static_cast<NodeId>(fv), static_cast<NodeId>(bv));
  }
  return pairs;
}

}  // namespace

namespace {

// AddWorkerCompute for the steps [first, end) of `t` (out[step * workers +
// k], the window's step index).
void AddComputeOfSteps(const whatif::PreparedTrace& t, size_t first, size_t end,
                       double* out) {
  const size_t dp = static_cast<size_t>(t.dp);
  const size_t pp = static_cast<size_t>(t.pp), workers = t.workers.size();
  // k of the worker at (dp rank, stage), [dp rank * pp + stage]: a dense
  // table, not a map lookup per slot.
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> index(dp * pp, kNone);
  for (size_t k = 0; k < workers; ++k) {
    const auto d = static_cast<size_t>(t.workers[k].dp);
    const auto s = static_cast<size_t>(t.workers[k].pp);
    if (d < dp && s < pp) index[d * pp + s] = k;
  }
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    const graph::OpKey& k = t.model.keys[v];
    if (!IsComputeNode(k)) continue;
    if (k.stage < 0 || static_cast<size_t>(k.stage) >= pp) continue;
    const double* cost = &t.cost[t.Slot(v, 0)];
    for (size_t step = first, i = first * dp; step < end; ++step) {
      for (size_t d = 0; d < dp; ++d, ++i) {
        const size_t w = index[d * pp + static_cast<size_t>(k.stage)];
        if (w != kNone) out[step * workers + w] += cost[i];
      }
    }
  }
}

}  // namespace

void AddWorkerCompute(const whatif::PreparedTrace& t, double* out) {
  AddComputeOfSteps(t, 0, t.steps.size(), out);
}

EvidenceBuilder::EvidenceBuilder(const whatif::PreparedTrace& shape) {
  e_.layout = shape.layout;
  e_.dp = shape.dp;
  e_.pp = shape.pp;
  e_.steps = shape.steps;
  e_.workers = shape.workers;
  e_.worker_rank = shape.worker_rank;
  e_.topology = shape.topology;
  e_.data_loading_s = shape.data_loading_s;
  e_.gc_s = shape.gc_s;
  e_.input_size = shape.input_size;
  e_.input_size_source = shape.input_size_source;
  if (shape.layout == whatif::Layout::kRanks) loading_ = shape.data_loading_s;
  e_.stage_has_pairs.assign(static_cast<size_t>(std::max(0, shape.pp)), 0);
  if (shape.layout == whatif::Layout::kMegatron) {
    for (int32_t s = 0; s < shape.pp; ++s) {
      e_.stage_has_pairs[static_cast<size_t>(s)] =
          !PairsOfStage(shape, s).empty();
    }
  }
}

void EvidenceBuilder::AddWindow(const whatif::PreparedTrace& w,
                                size_t threads) {
  const size_t steps = w.steps.size();
  if (steps == 0) return;
  if (added_steps_ == 0) {
    first_step_ = static_cast<size_t>(
        std::lower_bound(e_.steps.begin(), e_.steps.end(), w.steps.front()) -
        e_.steps.begin());
  }
  const size_t base = first_step_ + added_steps_;  // job index of step 0
  if (base + steps > e_.steps.size() || e_.steps[base] != w.steps.front()) {
    failed_ = true;
    return;
  }
  added_steps_ += steps;
  TraceEvidence& e = e_;
  const size_t cells = e.cells(), pp = static_cast<size_t>(w.pp);
  const size_t at = e.step_t_base.size();  // the window's first step here
  e.step_t_base.insert(e.step_t_base.end(), w.step_t_base.begin(),
                       w.step_t_base.end());
  e.compute.resize((at + steps) * e.workers.size(), 0.0);
  e.start_gap.resize((at + steps) * cells, 0.0f);
  e.pause.resize((at + steps) * cells, 0.0);
  e.pauses.resize(at + steps, 0);
  e.pause_total.resize(at + steps, 0.0);
  e.longest_pause.resize(at + steps, 0.0f);
  e.named_loading.resize(at + steps, 0.0);
  e.host_delay.resize(at + steps, 0.0);
  e.pairs.resize((at + steps) * pp);
  // Every value is of one step: ranges of steps on the threads write
  // disjoint parts of the arrays, each in the order one thread would.
  const size_t parts =
      std::min(steps, threads == 0 ? HardwareThreads() : threads);
  ParallelFor(parts, parts, [&](size_t k, size_t /*worker*/) {
    AddSteps(w, steps * k / parts, steps * (k + 1) / parts, at, base);
  });
}

void EvidenceBuilder::AddSteps(const whatif::PreparedTrace& w, size_t first,
                               size_t end, size_t at, size_t base) {
  TraceEvidence& e = e_;
  const size_t dp = static_cast<size_t>(w.dp), pp = static_cast<size_t>(w.pp);
  const size_t cells = e.cells(), job_steps = e.steps.size();
  AddComputeOfSteps(w, first, end, &e.compute[at * e.workers.size()]);

  // Start gaps: per (step, cell), the smallest root launch delay and the
  // launch delay of the earliest-starting compute.
  constexpr float kUnset = std::numeric_limits<float>::max();
  const size_t n = (end - first) * cells;
  std::vector<float> root(n, kUnset), first_start(n, kUnset);
  std::vector<float> first_delay(n, 0.0f);
  for (NodeId v = 0; v < w.num_nodes(); ++v) {
    const graph::OpKey& k = w.model.keys[v];
    const auto stage = static_cast<size_t>(k.stage);
    const bool roots = w.model.graph.num_deps(v) == 0;
    const bool compute = IsComputeNode(k);
    const float* delays = &w.launch_delay[w.Slot(v, 0)];
    const float* starts = &w.start[w.Slot(v, 0)];
    for (size_t s = first, i = first * dp; s < end; ++s) {
      for (size_t d = 0; d < dp; ++d, ++i) {
        const size_t cell = d * pp + stage;
        const size_t here = (s - first) * cells + cell;
        float ld = delays[i];
        if (roots) root[here] = std::min(root[here], ld);
        if (compute && starts[i] < first_start[here]) {
          first_start[here] = starts[i];
          first_delay[here] = ld;
        }
        if (ld >= kPauseS) e.host_delay[at + s] += ld;
        // Host time the trace names as data loading is data loading's,
        // not a pause: taken off the launch delays of its rank and step.
        const size_t slot = stage * job_steps + base + s;
        if (slot < loading_.size()) {
          const float used = std::min(std::max(ld, 0.0f), loading_[slot]);
          loading_[slot] -= used;
          ld -= used;
          e.named_loading[at + s] += used;
        }
        if (ld < kPauseS) continue;
        ++e.pauses[at + s];
        e.pause_total[at + s] += ld;
        e.longest_pause[at + s] = std::max(e.longest_pause[at + s], ld);
        e.pause[(at + s) * cells + cell] += ld;
      }
    }
  }
  for (size_t here = 0; here < n; ++here) {
    e.start_gap[(at + first) * cells + here] =
        std::max(root[here] == kUnset ? 0.0f : root[here], first_delay[here]);
  }

  // The (forward, backward) pairs of each stage, centred per instance so
  // that a steadily slow worker does not correlate them.
  if (w.layout != whatif::Layout::kMegatron) return;
  std::vector<double> fx, by;
  for (int32_t st = 0; st < w.pp; ++st) {
    if (!e.stage_has_pairs[static_cast<size_t>(st)]) continue;
    const std::vector<std::pair<NodeId, NodeId>> pairs = PairsOfStage(w, st);
    fx.resize(pairs.size());
    by.resize(pairs.size());
    for (size_t s = first, i = first * dp; s < end; ++s) {
      PairSums& sums = e.pairs[(at + s) * pp + static_cast<size_t>(st)];
      for (size_t d = 0; d < dp; ++d, ++i) {
        double mf = 0, mb = 0;
        for (size_t k = 0; k < pairs.size(); ++k) {
          fx[k] = w.cost[w.Slot(pairs[k].first, i)];
          by[k] = w.cost[w.Slot(pairs[k].second, i)];
          mf += fx[k], mb += by[k];
        }
        mf /= static_cast<double>(pairs.size());
        mb /= static_cast<double>(pairs.size());
        for (size_t k = 0; k < pairs.size(); ++k) {
          const double x = fx[k] - mf, y = by[k] - mb;
          sums.n += 1;
          sums.x += x, sums.y += y;
          sums.xy += x * y, sums.xx += x * x, sums.yy += y * y;
        }
      }
    }
  }
}

Result<TraceEvidence> EvidenceBuilder::Finish(Collective* c) && {
  TraceEvidence& e = e_;
  bool failed = failed_;
  if (c != nullptr && c->size() > 1) {
    // Every process makes the same calls: first whether any went wrong.
    ASSIGN_OR_RETURN(const std::vector<uint8_t> wrong,
                     AllGatherValue<uint8_t>(c, failed ? 1 : 0));
    for (uint8_t w : wrong) failed |= w != 0;
    if (!failed) {
      // Each process holds its steps' values: concatenated in process
      // order, which is step order.
      RETURN_IF_ERROR(AllGatherConcat<float>(
          c, {&e.step_t_base, &e.start_gap, &e.longest_pause}));
      RETURN_IF_ERROR(
          AllGatherConcat<double>(c, {&e.compute, &e.pause, &e.pause_total,
                                      &e.named_loading, &e.host_delay}));
      RETURN_IF_ERROR(AllGatherConcat<uint64_t>(c, {&e.pauses}));
      RETURN_IF_ERROR(AllGatherConcat<PairSums>(c, {&e.pairs}));
    }
  } else if (first_step_ != 0) {
    return Internal("evidence: the windows do not start at the first step");
  }
  if (failed) {
    return Internal(
        "evidence: a window is not the one after the last, or failed");
  }
  const size_t steps = e.steps.size();
  if (e.step_t_base.size() != steps ||
      e.compute.size() != steps * e.workers.size() ||
      e.start_gap.size() != steps * e.cells() ||
      e.pairs.size() != steps * static_cast<size_t>(e.pp)) {
    return Internal("evidence: the windows do not cover every step once");
  }
  return std::move(e_);
}

TraceEvidence EvidenceOf(const whatif::PreparedTrace& t, size_t threads) {
  EvidenceBuilder builder(t);
  builder.AddWindow(t, threads);
  Result<TraceEvidence> e = std::move(builder).Finish();
  return std::move(e).value();  // one window of every step cannot fail
}

}  // namespace strag::diagnose
