// SPDX-License-Identifier: Apache-2.0
// The alert rules of the online detector (live-monitoring.md §4.5), run
// after every closed step: TrainingRankSilent for ranks missing from
// silent_steps closed steps (one alert per set that went silent together,
// resolved when all of them report again); TrainingStragglerPersistent
// for a rank among the job's top 3 by lateness whose persistence and
// effect gates have held for continuity_s of data time (one alert for the
// ranks that become ready together, resolved when each of them has left
// its gates, persistence < exit or excess < half the floor, for exit_s);
// and the same for a hot PP stage, sequence-length imbalance and slow
// transfers (one alert each).

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/str_format.h"
#include "diagnose/online/detector_state.h"

namespace strag::diagnose::online {
namespace {

constexpr size_t kGateTop = 3;  // a straggler alert names a top-3 rank

int64_t Ns(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }

AlertEvent NewAlert(const DetectorState& s, int64_t step, Cause cause) {
  AlertEvent e;
  e.cause = cause;
  e.step = step;
  e.t_ns = s.t_ns;
  return e;
}

void SilentAlerts(DetectorState& s, int64_t step,
                  std::vector<AlertEvent>* events) {
  s.silent_alert.resize(static_cast<size_t>(s.table.num_ranks()), 0);
  for (int32_t index : s.back) {
    int64_t& id = s.silent_alert[static_cast<size_t>(index)];
    const auto it = s.held.find(id);
    id = 0;
    if (it == s.held.end()) continue;
    std::vector<int32_t>& left = it->second.keys;
    left.erase(std::remove(left.begin(), left.end(), index), left.end());
    if (!left.empty()) continue;
    s.book.Resolve(it->first, step, s.t_ns, events);
    s.held.erase(it);
  }
  if (s.newly_silent.empty()) return;
  AlertEvent e = NewAlert(s, step, Cause::kNone);
  e.name = AlertName::kRankSilent;
  for (int32_t index : s.newly_silent) {
    e.ranks.push_back(s.table.place(index).rank);
  }
  std::sort(e.ranks.begin(), e.ranks.end());
  e.scope = s.table.ScopeOf(s.newly_silent);
  e.summary =
      StrFormat("%zu rank(s) sent no record for %d closed steps: %s",
                e.ranks.size(), s.options.silent_steps, e.scope.c_str());
  const int64_t id = s.book.Fire(std::move(e), events);
  s.held[id] = HeldAlert{HeldKind::kSilent, s.newly_silent, Gate{}};
  for (int32_t index : s.newly_silent) {
    s.silent_alert[static_cast<size_t>(index)] = id;
  }
}

void FireWorkers(DetectorState& s, int64_t step,
                 const std::vector<int32_t>& cells,
                 std::vector<AlertEvent>* events) {
  std::vector<int32_t> indexes;
  for (int32_t c : cells) indexes.push_back(NamedRank(s, c));
  const CellSums& worst = s.window.sums(cells.front());
  const CellStats st = StatsOf(worst);
  const CellCause cause = ClassifyCell(worst, s.options.cause_coverage);
  const int32_t rank = s.table.place(indexes.front()).rank;
  const Finding f = WorkerFinding(st, cause, rank, s.options);
  AlertEvent e = NewAlert(s, step, cause.cause);
  for (int32_t index : indexes) e.ranks.push_back(s.table.place(index).rank);
  e.scope = s.table.ScopeOf(indexes);
  e.excess_ratio =
      s.facts.mean_step_ns > 0 ? st.mean_lateness_ns / s.facts.mean_step_ns : 0;
  e.summary =
      (cause.cause == Cause::kNone ? std::string("straggler")
                                   : std::string(CauseName(cause.cause))) +
      ": " + f.evidence;
  if (cells.size() > 1) {
    e.summary += StrFormat(" (and %zu more ranks)", cells.size() - 1);
  }
  // The window reaches back before the onset; what the continuity gate
  // timed is the run since it.
  const auto gate = s.worker_gates.find(cells.front());
  if (gate != s.worker_gates.end() && gate->second.since_step >= 0) {
    int32_t late = 0, judged = 0;
    for (int32_t k = 0; k < s.window.size(); ++k) {
      if (s.window.job(k).step < gate->second.since_step) continue;
      const CellEntry& x = s.window.entry(k, cells.front());
      judged += (x.bits & kJudged) ? 1 : 0;
      late += (x.bits & kJudged) && (x.bits & kImplicated) ? 1 : 0;
    }
    if (judged > 0) {
      e.summary += StrFormat("; since step %lld, when it began: late in "
                             "%.0f%% of %d steps",
                             static_cast<long long>(gate->second.since_step),
                             100.0 * late / judged, judged);
    }
  }
  const int64_t id = s.book.Fire(std::move(e), events);
  s.held[id] = HeldAlert{HeldKind::kWorker, cells, Gate{}};
  for (int32_t c : cells) s.worker_gates[c].alert_id = id;
}

// When a rank's gates first hold, their clock starts at the onset of its
// lateness, not now: the persistence gate needs half a window of late
// steps, which the continuity gate would otherwise add to. The onset is the
// earliest implicated step from which the rank stayed implicated in at
// least 3/4 of the judged steps, within the window (stricter than the
// persistence gate, so that chance late steps before the onset move it
// back by a few steps at most).
void StartAtOnset(const DetectorState& s, int32_t cell, int64_t step,
                  Gate* g) {
  int32_t late = 0, judged = 0;
  int64_t onset_step = step, onset_ns = s.t_ns;
  for (int32_t k = s.window.size() - 1; k >= 0; --k) {
    const CellEntry& e = s.window.entry(k, cell);
    if (!(e.bits & kJudged)) continue;
    ++judged;
    if (!(e.bits & kImplicated)) continue;
    ++late;
    if (4 * late >= 3 * judged) {
      onset_step = s.window.job(k).step;
      onset_ns = s.window.job(k).t_ns;
    }
  }
  g->since_step = onset_step;
  g->since_ns = onset_ns;
}

void WorkerAlerts(DetectorState& s, int64_t step,
                  const std::vector<int32_t>& top,
                  std::vector<AlertEvent>* events) {
  for (auto it = s.worker_gates.begin(); it != s.worker_gates.end();) {
    const bool listed =
        std::find(top.begin(), top.end(), it->first) != top.end();
    if (!listed) it->second.Enter(false, step, s.t_ns, 0);
    it = !listed && it->second.alert_id == 0 ? s.worker_gates.erase(it)
                                             : std::next(it);
  }
  std::vector<int32_t> ready;
  const int64_t continuity = Ns(s.options.continuity_s);
  for (int32_t c : top) {
    const CellStats st = StatsOf(s.window.sums(c));
    const bool holds = WorkerGatesHold(s, st);
    Gate& g = s.worker_gates[c];
    if (holds && g.since_step < 0) StartAtOnset(s, c, step, &g);
    if (g.Enter(holds, step, s.t_ns, continuity) && g.alert_id == 0) {
      ready.push_back(c);
    }
  }
  if (!ready.empty()) FireWorkers(s, step, ready, events);
}

void FireJob(DetectorState& s, int64_t step, HeldKind kind, int32_t stage,
             std::vector<AlertEvent>* events) {
  const WindowFacts& w = s.facts;
  AlertEvent e = NewAlert(s, step, Cause::kNone);
  Finding f;
  double excess = 0;
  if (kind == HeldKind::kStage) {
    const int32_t pp = s.table.pp_of_stage(stage);
    f = StageFinding(w, pp, s.options);
    for (int32_t index : StageRanks(
             s, stage, static_cast<size_t>(std::max(s.options.top_k, 1)))) {
      e.ranks.push_back(s.table.place(index).rank);
    }
    e.scope = StrFormat("PP stage %d", pp);
    excess = w.mean_stage_ns;
  } else if (kind == HeldKind::kSequence) {
    f = SequenceFinding(w);
    e.scope = "job";
    excess = w.mean_worker_ns;
  } else {
    f = CommunicationFinding(w, s.options);
    e.scope = StrFormat(
        "job (%s collectives)",
        trace::kCollGroupNames[static_cast<size_t>(std::max(w.comm_kind, 0))]);
    excess = w.mean_comm_ns;
  }
  e.cause = f.cause;
  e.excess_ratio = w.mean_step_ns > 0 ? excess / w.mean_step_ns : 0;
  e.summary = std::string(CauseName(f.cause)) + ": " + f.evidence;
  const int64_t id = s.book.Fire(std::move(e), events);
  s.held[id] = HeldAlert{kind, {stage}, Gate{}};
  if (kind == HeldKind::kStage) s.stage_gates[stage].alert_id = id;
  if (kind == HeldKind::kSequence) s.seq_gate.alert_id = id;
  if (kind == HeldKind::kCommunication) s.comm_gate.alert_id = id;
}

void JobAlerts(DetectorState& s, int64_t step, const JobGates& g,
               std::vector<AlertEvent>* events) {
  const int64_t continuity = Ns(s.options.continuity_s);
  const int32_t hot = s.facts.hot_stage;
  for (auto it = s.stage_gates.begin(); it != s.stage_gates.end();) {
    if (it->first != hot) it->second.Enter(false, step, s.t_ns, 0);
    it = it->first != hot && it->second.alert_id == 0 ? s.stage_gates.erase(it)
                                                      : std::next(it);
  }
  if (hot >= 0) {
    Gate& gate = s.stage_gates[hot];
    if (gate.Enter(g.stage_enter, step, s.t_ns, continuity) &&
        gate.alert_id == 0) {
      FireJob(s, step, HeldKind::kStage, hot, events);
    }
  }
  if (s.seq_gate.Enter(g.seq_enter, step, s.t_ns, continuity) &&
      s.seq_gate.alert_id == 0) {
    FireJob(s, step, HeldKind::kSequence, -1, events);
  }
  if (s.comm_gate.Enter(g.comm_enter, step, s.t_ns, continuity) &&
      s.comm_gate.alert_id == 0) {
    FireJob(s, step, HeldKind::kCommunication, -1, events);
  }
}

// Whether a held alert's exit conditions hold now.
bool ExitHolds(const DetectorState& s, const HeldAlert& h, const JobGates& g) {
  const WindowFacts& w = s.facts;
  switch (h.kind) {
    case HeldKind::kWorker:
      return std::all_of(h.keys.begin(), h.keys.end(), [&](int32_t c) {
        const CellStats st = StatsOf(s.window.sums(c));
        return st.judged == 0 || st.persistence < s.options.persistence_exit ||
               st.mean_lateness_ns < w.floor_ns / 2;
      });
    case HeldKind::kStage: {
      const JobSums& j = s.window.job_sums();
      const auto stage = static_cast<size_t>(h.keys.front());
      const double share = j.judged > 0 && stage < j.hot.size()
                               ? static_cast<double>(j.hot[stage]) / j.judged
                               : 0;
      return share < s.options.persistence_exit ||
             w.mean_stage_ns < w.floor_ns / 2;
    }
    case HeldKind::kSequence:
      return g.seq_exit;
    case HeldKind::kCommunication:
      return g.comm_exit;
    case HeldKind::kSilent:
      return false;  // resolved by the ranks' return
  }
  return false;
}

void Release(DetectorState& s, const HeldAlert& h) {
  if (h.kind == HeldKind::kWorker) {
    for (int32_t c : h.keys) s.worker_gates[c].alert_id = 0;
  } else if (h.kind == HeldKind::kStage) {
    s.stage_gates[h.keys.front()].alert_id = 0;
  } else if (h.kind == HeldKind::kSequence) {
    s.seq_gate.alert_id = 0;
  } else if (h.kind == HeldKind::kCommunication) {
    s.comm_gate.alert_id = 0;
  }
}

void ResolveHeld(DetectorState& s, int64_t step, const JobGates& g,
                 std::vector<AlertEvent>* events) {
  const int64_t exit_ns = Ns(s.options.exit_s);
  for (auto it = s.held.begin(); it != s.held.end();) {
    HeldAlert& h = it->second;
    if (h.kind == HeldKind::kSilent ||
        !h.exit.Exit(ExitHolds(s, h, g), s.t_ns, exit_ns)) {
      ++it;
      continue;
    }
    Release(s, h);
    s.book.Resolve(it->first, step, s.t_ns, events);
    it = s.held.erase(it);
  }
}

}  // namespace

void EvaluateAlerts(DetectorState& s, int64_t step,
                    std::vector<AlertEvent>* events) {
  s.facts = MeasureWindow(s.window, s.options, s.table.num_cells());
  SilentAlerts(s, step, events);
  std::vector<int32_t> top;
  TopCells(s, kGateTop, &top);
  WorkerAlerts(s, step, top, events);
  const JobGates gates = GatesNow(s, top);
  JobAlerts(s, step, gates, events);
  ResolveHeld(s, step, gates, events);
}

}  // namespace strag::diagnose::online
