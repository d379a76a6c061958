// SPDX-License-Identifier: Apache-2.0
// OnlineDetector::View: the detector's current picture, with the online
// report in the offline vocabulary (live-monitoring.md §4.6).

#include <algorithm>
#include <cmath>
#include <utility>

#include "diagnose/online/detector_state.h"

namespace strag::diagnose::online {
namespace {

constexpr double kMinProbable = 0.4;  // as offline: below, no probable cause
constexpr double kPersistentP90 = 1.06;
constexpr size_t kMaxHeatCells = 1 << 22;  // a larger pp x dp: no heatmap

Suspect SuspectOf(const DetectorState& s, int32_t cell) {
  Suspect x;
  const CellSums& sums = s.window.sums(cell);
  const CellStats st = StatsOf(sums);
  const CellCause cause = ClassifyCell(sums, s.options.cause_coverage);
  x.place = s.table.place(NamedRank(s, cell));
  x.persistence = st.persistence;
  x.lateness_ns = st.mean_lateness_ns;
  x.excess_ratio =
      s.facts.mean_step_ns > 0 ? st.mean_lateness_ns / s.facts.mean_step_ns : 0;
  x.z = static_cast<size_t>(cell) < s.last_z.size()
            ? s.last_z[static_cast<size_t>(cell)]
            : 0;
  // A cause is named only for a rank past the persistence and effect
  // gates: the others' lateness is noise.
  if (WorkerGatesHold(s, st)) {
    x.cause = cause.cause;
    x.coverage = cause.coverage;
  }
  const auto gate = s.worker_gates.find(cell);
  x.since_step = gate == s.worker_gates.end() ? -1 : gate->second.since_step;
  return x;
}

void Heatmap(const DetectorState& s, OnlineView* v) {
  v->dp_size = s.table.dp_size();
  v->pp_size = s.table.pp_size();
  const size_t n =
      static_cast<size_t>(v->dp_size) * static_cast<size_t>(v->pp_size);
  if (n > kMaxHeatCells) return;
  v->heat_last.assign(n, 0);
  v->heat_mean.assign(n, 0);
  for (int32_t c = 0; c < s.table.num_cells(); ++c) {
    const size_t at = static_cast<size_t>(s.table.cell_pp(c)) *
                          static_cast<size_t>(v->dp_size) +
                      static_cast<size_t>(s.table.cell_dp(c));
    if (static_cast<size_t>(c) < s.last_ratio.size()) {
      v->heat_last[at] = s.last_ratio[static_cast<size_t>(c)];
    }
    const CellStats st = StatsOf(s.window.sums(c));
    v->heat_mean[at] = st.judged > 0 ? static_cast<float>(st.mean_ratio) : 0;
  }
  v->stage_busy_s.assign(static_cast<size_t>(v->pp_size), 0);
  for (size_t st = 0; st < s.last_stage_med.size(); ++st) {
    const int32_t pp = s.table.pp_of_stage(static_cast<int32_t>(st));
    v->stage_busy_s[static_cast<size_t>(pp)] =
        std::max(0.0, s.last_stage_med[st]) / 1e9;
  }
}

// The window's per-step slowdown T / ideal: its P90 over S, and the worst
// step.
void PerStep(const DetectorState& s, Diagnosis* d) {
  std::vector<std::pair<double, int64_t>> v;
  for (int32_t k = 0; k < s.window.size(); ++k) {
    const JobStep& j = s.window.job(k);
    if (!j.judged || j.ideal_ns <= 0) continue;
    v.emplace_back(
        static_cast<double>(j.step_ns) / static_cast<double>(j.ideal_ns),
        j.step);
  }
  d->persistence_known = v.size() >= 2;
  if (v.empty()) return;
  d->worst_step = std::max_element(v.begin(), v.end())->second;
  std::vector<double> r;
  for (const auto& [x, step] : v) r.push_back(x / s.facts.slowdown);
  std::sort(r.begin(), r.end());
  const double pos = 0.9 * static_cast<double>(r.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, r.size() - 1);
  d->persistence_p90 =
      r[lo] + (r[hi] - r[lo]) * (pos - static_cast<double>(lo));
}

// Findings in confidence order, each with the rank index it names (-1).
std::vector<std::pair<Finding, int32_t>> Findings(
    const DetectorState& s, const std::vector<int32_t>& top) {
  std::vector<std::pair<Finding, int32_t>> out;
  const WindowFacts& w = s.facts;
  for (int32_t c : top) {
    const CellStats st = StatsOf(s.window.sums(c));
    if (!WorkerGatesHold(s, st)) continue;
    const int32_t index = NamedRank(s, c);
    const CellCause cause =
        ClassifyCell(s.window.sums(c), s.options.cause_coverage);
    out.emplace_back(
        WorkerFinding(st, cause, s.table.place(index).rank, s.options), index);
  }
  const JobGates g = GatesNow(s, top);
  if (g.stage_enter) {
    const std::vector<int32_t> ranks = StageRanks(s, w.hot_stage, 8);
    Finding f = StageFinding(w, s.table.pp_of_stage(w.hot_stage), s.options);
    for (int32_t index : ranks) f.ranks.push_back(s.table.place(index).rank);
    out.emplace_back(std::move(f), ranks.empty() ? -1 : ranks.front());
  }
  if (g.seq_enter) out.emplace_back(SequenceFinding(w), -1);
  if (g.comm_enter) out.emplace_back(CommunicationFinding(w, s.options), -1);
  if (out.empty() && w.judged > 0 && w.slowdown < 1.05) {
    out.emplace_back(HealthyFinding(w), -1);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first.confidence > b.first.confidence;
  });
  return out;
}

std::string DominantCause(const WindowFacts& w) {
  const double blocking = w.mean_worker_ns + w.mean_stage_ns;
  if (w.mean_comm_ns > blocking) return "transfer slowdown (communication)";
  if (blocking > 0 && w.mean_host_ns >= 0.5 * blocking) {
    return "host-side launch delays";
  }
  return "synchronization waiting (blocking)";
}

Diagnosis BuildDiagnosis(const DetectorState& s,
                         const std::vector<int32_t>& top) {
  Diagnosis d;
  const WindowFacts& w = s.facts;
  if (w.judged == 0) {
    WithoutDiagnosis("no step judged yet (warm-up)", &d);
    d.persistence_known = false;
    return d;
  }
  const auto found = Findings(s, top);
  int32_t named = -1;
  for (const auto& [f, index] : found) d.findings.push_back(f);
  if (!found.empty()) named = found.front().second;
  d.probable_cause =
      d.findings.empty() || d.findings.front().confidence < kMinProbable
          ? Cause::kNone
          : d.findings.front().cause;
  d.dominant_cause = DominantCause(w);
  const double blocking = w.mean_worker_ns + w.mean_stage_ns;
  d.excess_step_time_ms = (w.mean_step_ns - w.mean_ideal_ns) / 1e6;
  d.blocking_share =
      blocking > 0 ? 1 - std::min(w.mean_host_ns, blocking) / blocking : 1;
  const double lost = blocking + w.mean_comm_ns;
  d.communication_share = lost > 0 ? w.mean_comm_ns / lost : 0;
  d.compute_share = lost > 0 ? 1 - d.communication_share : 0;
  PerStep(s, &d);
  d.persistent = d.persistence_p90 <= kPersistentP90;
  if (named >= 0) {
    const RankPlace& p = s.table.place(named);
    d.largest_straggler = {p.rank, p.dp, p.pp, p.tp, p.node, {}};
    d.scope = s.table.Scope(named);
    const CellStats st = StatsOf(s.window.sums(s.table.cell_of(named)));
    d.worst_worker_share = st.last_share;
    const double share = d.findings.front().step_share >= 0
                             ? d.findings.front().step_share
                             : st.persistence;
    d.persistent = share >= s.options.persistence_enter;
  }
  return d;
}

}  // namespace

OnlineView OnlineDetector::View() const {
  const DetectorState& s = *state_;
  OnlineView v;
  v.steps_closed = s.steps_closed;
  v.last_step = s.last_step;
  const WindowFacts& w = s.facts;
  v.slowdown = w.slowdown;
  v.utilization = w.slowdown > 0 ? 1 / w.slowdown : 1;
  v.mean_step_s = w.mean_step_ns / 1e9;
  v.mean_excess_s = (w.mean_worker_ns + w.mean_stage_ns) / 1e9;
  std::vector<int32_t> top;
  TopCells(s, static_cast<size_t>(std::max(s.options.top_k, 1)), &top);
  for (int32_t c : top) v.top.push_back(SuspectOf(s, c));
  Heatmap(s, &v);
  v.lost_sync_wait_s = s.lost_sync_s;
  v.lost_host_delay_s = s.lost_host_s;
  v.lost_compute_s = s.lost_compute_s;
  v.wasted_s = s.wasted_s;
  for (int32_t i = 0; i < s.table.num_ranks(); ++i) {
    if (s.presence.silent(i)) v.silent_ranks.push_back(s.table.place(i).rank);
  }
  std::sort(v.silent_ranks.begin(), v.silent_ranks.end());
  v.active = s.book.Active();
  v.diagnosis = BuildDiagnosis(s, top);
  return v;
}

}  // namespace strag::diagnose::online
