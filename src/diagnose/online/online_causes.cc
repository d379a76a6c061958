// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/online_causes.h"

#include <algorithm>
#include <cmath>

#include "base/str_format.h"

namespace strag::diagnose::online {
namespace {

constexpr double kSeqPearson = 0.9;  // r(busy, sum_s2), §4.4
constexpr double kSeqPearsonExit = 0.8;
constexpr double kSeqSpread = 0.3;  // last arrivers over >= 30% of G
constexpr double kWorkMatch = 0.8;  // steps with the peers' work
constexpr double kHealthy = 1.05;   // S_online below: healthy

double Clamp01(double x) {
  return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0;
}
double Ms(double ns) { return ns / 1e6; }
double Div(double a, double b) { return b != 0 ? a / b : 0; }

}  // namespace

int32_t MinJudged(const OnlineOptions& o) {
  return std::min(10, std::max(o.window_steps, 1));
}

CellStats StatsOf(const CellSums& s) {
  CellStats c;
  c.judged = s.judged;
  if (s.judged == 0) return c;
  const double n = s.judged;
  c.persistence = s.implicated / n;
  c.last_share = s.last / n;
  c.mean_lateness_ns = static_cast<double>(s.lateness_ns) / n;
  c.mean_ratio = static_cast<double>(s.ratio) / n / 1e4;
  c.individual = 2 * s.individual > s.implicated;
  return c;
}

CellCause ClassifyCell(const CellSums& s, double needed) {
  const auto late = static_cast<double>(s.late_impl_ns);
  if (s.implicated == 0 || late <= 0) return {Cause::kNone, 0, "no late step"};
  const double gc = Clamp01(static_cast<double>(s.gc_impl_ns) / late);
  const double data = Clamp01(static_cast<double>(s.data_impl_ns) / late);
  const double phases = Clamp01(static_cast<double>(s.compute_impl_ns) / late);
  // Busy time is the step minus collectives: what GC and data loading do
  // not explain is the rank's own work, whether or not the phases saw it
  // (a host-timed DDP backward also holds the gradient all-reduce, and work
  // between the phases is in no phase).
  const double compute = std::max(phases, Clamp01(1 - gc - data));
  // Persistent late starts are data loading before they are host pauses,
  // as offline.
  if (std::max(gc, data) >= needed) {
    if (data >= gc) {
      return {Cause::kDataLoading, data,
              StrFormat("data loading covers %.0f%% of it", 100 * data)};
    }
    return {Cause::kHostPause, gc,
            StrFormat("GC pauses cover %.0f%% of it", 100 * gc)};
  }
  if (compute >= needed) {
    const bool given = 2 * s.work_given >= s.implicated;
    const double match = Div(s.work_equal, s.work_given);
    if (given && match < kWorkMatch) {
      return {Cause::kSequenceLengthImbalance, compute,
              StrFormat("its compute covers %.0f%% of it, but its tokens or "
                        "sum_s2 differ from its peers' by more than 5%% in "
                        "%.0f%% of those steps",
                        100 * compute, 100 * (1 - match))};
    }
    return {Cause::kFaultyWorker, compute,
            StrFormat("%s covers %.0f%% of it%s",
                      phases >= needed
                          ? "its compute (forward, backward, optimizer)"
                          : "its own work (busy time outside GC and data "
                            "loading)",
                      100 * compute,
                      given ? " with the same work as its peers (tokens "
                              "and sum_s2 within 5%)"
                            : "")};
  }
  return {Cause::kNone, std::max({gc, data, compute}),
          StrFormat("straggler (cause unclear): GC covers %.0f%%, data "
                    "loading %.0f%% and compute %.0f%% of it",
                    100 * gc, 100 * data, 100 * compute)};
}

namespace {

// The stage hot in the most steps, and the collective kind elevated in the
// most.
void HotStageAndKind(const JobSums& s, WindowFacts* w) {
  const double n = s.judged;
  for (size_t h = 0; h < s.hot.size(); ++h) {
    if (s.hot[h] > 0 && (w->hot_stage < 0 ||
                         s.hot[h] > s.hot[static_cast<size_t>(w->hot_stage)])) {
      w->hot_stage = static_cast<int32_t>(h);
    }
  }
  if (w->hot_stage >= 0) {
    const auto h = static_cast<size_t>(w->hot_stage);
    w->hot_share = s.hot[h] / n;
    w->hot_ratio = static_cast<double>(s.hot_ratio_micro[h]) / s.hot[h] / 1e6;
  }
  for (size_t g = 0; g < trace::kCollGroups; ++g) {
    if (s.elevated[g] > 0 &&
        (w->comm_kind < 0 ||
         s.elevated[g] > s.elevated[static_cast<size_t>(w->comm_kind)])) {
      w->comm_kind = static_cast<int32_t>(g);
    }
  }
  if (w->comm_kind >= 0) {
    const auto g = static_cast<size_t>(w->comm_kind);
    w->comm_share = s.elevated[g] / n;
    w->comm_transfer_ns = static_cast<double>(s.transfer_ns[g]) / s.elevated[g];
    w->comm_baseline_ns = static_cast<double>(s.baseline_ns[g]) / s.elevated[g];
  }
}

}  // namespace

WindowFacts MeasureWindow(const Window& window, const OnlineOptions& o,
                          int32_t cells) {
  WindowFacts w;
  const JobSums& s = window.job_sums();
  w.steps = window.size();
  w.judged = s.judged;
  w.floor_ns = static_cast<double>(o.effect_min_ns);
  if (s.judged == 0) return w;
  const double n = s.judged;
  w.mean_step_ns = static_cast<double>(s.step_ns) / n;
  w.mean_ideal_ns = static_cast<double>(s.ideal_ns) / n;
  w.mean_worker_ns = static_cast<double>(s.worker_ns) / n;
  w.mean_stage_ns = static_cast<double>(s.stage_ns) / n;
  w.mean_host_ns = static_cast<double>(s.host_ns) / n;
  w.mean_comm_ns = static_cast<double>(s.comm_ns) / n;
  w.floor_ns = std::max(o.effect_ratio * w.mean_step_ns, w.floor_ns);
  w.slowdown = s.ideal_ns > 0 ? static_cast<double>(s.step_ns) /
                                    static_cast<double>(s.ideal_ns)
                              : 1;
  if (s.seq_n > 0) {
    w.seq_r = static_cast<double>(s.seq_r_micro) / s.seq_n / 1e6;
    w.seq_share = s.seq_n / n;
  }
  w.distinct_last = s.distinct_last;
  const int32_t room = std::min(s.judged, cells);
  w.spread = room > 1 ? static_cast<double>(w.distinct_last) / room : 0;
  HotStageAndKind(s, &w);
  return w;
}

JobGates JudgeJobGates(const WindowFacts& w, const OnlineOptions& o,
                       bool persistent_worker, bool straggler_in_hot_stage) {
  JobGates g;
  if (w.judged < MinJudged(o)) return g;
  const double half = w.floor_ns / 2;
  g.stage_enter = w.hot_stage >= 0 && !straggler_in_hot_stage &&
                  w.hot_share >= o.persistence_enter &&
                  w.mean_stage_ns >= w.floor_ns &&
                  w.mean_stage_ns >= w.mean_worker_ns;
  g.stage_exit = w.hot_share < o.persistence_exit || w.mean_stage_ns < half;
  g.seq_enter = !persistent_worker && w.seq_share >= 0.5 &&
                w.seq_r >= kSeqPearson && w.spread >= kSeqSpread &&
                w.mean_worker_ns >= w.floor_ns;
  g.seq_exit = persistent_worker || w.seq_share < 0.5 ||
               w.seq_r < kSeqPearsonExit || w.mean_worker_ns < half;
  g.comm_enter = !persistent_worker && w.comm_kind >= 0 &&
                 w.comm_share >= o.persistence_enter &&
                 w.mean_comm_ns >= w.floor_ns;
  g.comm_exit = w.comm_share < o.persistence_exit || w.mean_comm_ns < half;
  return g;
}

Finding WorkerFinding(const CellStats& st, const CellCause& cause, int32_t rank,
                      const OnlineOptions& o) {
  Finding f;
  f.cause = cause.cause;
  f.ranks = {rank};
  f.step_share = st.persistence;
  const double held = Clamp01(st.persistence / o.persistence_enter);
  f.confidence =
      cause.cause == Cause::kNone ? 0.5 * held : cause.coverage * held;
  const std::string how =
      st.individual
          ? StrFormat(
                "rank %d is late in %.0f%% of the last %d steps, "
                "%.1f ms over its own baseline",
                rank, 100 * st.persistence, st.judged, Ms(st.mean_lateness_ns))
          : StrFormat(
                "rank %d is late in %.0f%% of the last %d steps (its "
                "stage's last to finish in %.0f%%), %.1f ms (%+.0f%%) "
                "over its peers' median",
                rank, 100 * st.persistence, st.judged, 100 * st.last_share,
                Ms(st.mean_lateness_ns), 100 * (st.mean_ratio - 1));
  f.evidence = how + "; " + cause.because;
  return f;
}

Finding StageFinding(const WindowFacts& w, int32_t pp, const OnlineOptions& o) {
  Finding f;
  f.cause = Cause::kStageImbalance;
  f.step_share = w.hot_share;
  f.confidence =
      Clamp01(w.hot_share / o.persistence_enter) *
      Clamp01(2 * Div(w.mean_stage_ns, w.mean_stage_ns + w.mean_worker_ns));
  f.evidence = StrFormat(
      "PP stage %d's median busy time is %.2fx the mean stage's in %.0f%% "
      "of the last %d steps; the stage excess costs %.1f ms a step (%.0f%% "
      "of the step), the worker excess %.1f ms",
      pp, w.hot_ratio, 100 * w.hot_share, w.judged, Ms(w.mean_stage_ns),
      100 * Div(w.mean_stage_ns, w.mean_step_ns), Ms(w.mean_worker_ns));
  return f;
}

Finding SequenceFinding(const WindowFacts& w) {
  Finding f;
  f.cause = Cause::kSequenceLengthImbalance;
  f.confidence = Clamp01((w.seq_r - 0.5) / 0.4) *
                 Clamp01(w.spread / kSeqSpread) *
                 Clamp01(Div(w.mean_worker_ns, w.floor_ns));
  f.evidence = StrFormat(
      "busy time follows sum_s2 (mean Pearson r = %.2f within steps) and "
      "the last to finish changes (%d ranks in the last %d steps, none "
      "persistently); the worker excess costs %.1f ms a step (%.0f%% of "
      "the step)",
      w.seq_r, w.distinct_last, w.judged, Ms(w.mean_worker_ns),
      100 * Div(w.mean_worker_ns, w.mean_step_ns));
  return f;
}

Finding CommunicationFinding(const WindowFacts& w, const OnlineOptions& o) {
  Finding f;
  f.cause = Cause::kCommunication;
  f.step_share = w.comm_share;
  f.confidence = Clamp01(w.comm_share / o.persistence_enter) *
                 Clamp01(Div(w.mean_comm_ns, w.floor_ns));
  const char* kind =
      w.comm_kind >= 0
          ? trace::kCollGroupNames[static_cast<size_t>(w.comm_kind)]
          : "?";
  f.evidence = StrFormat(
      "%s collectives' transfer time (the least time of a group) is %.1f "
      "ms, %+.0f%% over its baseline of %.1f ms, in %.0f%% of the last %d "
      "steps, while busy time is balanced",
      kind, Ms(w.comm_transfer_ns),
      100 * (Div(w.comm_transfer_ns, w.comm_baseline_ns) - 1),
      Ms(w.comm_baseline_ns), 100 * w.comm_share, w.judged);
  return f;
}

Finding HealthyFinding(const WindowFacts& w) {
  Finding f;
  f.cause = Cause::kNone;
  f.confidence = w.slowdown < kHealthy ? 1 : 0;
  f.evidence = StrFormat(
      "healthy: the step is %.1f%% over its ideal (utilization %.1f%%) and "
      "no rank is persistently late; residual noise costs %.1f ms a step",
      100 * (w.slowdown - 1), 100 / w.slowdown,
      Ms(w.mean_step_ns - w.mean_ideal_ns));
  return f;
}

}  // namespace strag::diagnose::online
