// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/online_detector.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "base/str_format.h"
#include "diagnose/online/detector_state.h"

namespace strag::diagnose::online {
namespace {

// Cells x steps the window may hold (12 bytes each: 768 MB).
constexpr int64_t kMaxWindowEntries = 64'000'000;

int64_t Ns(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }

std::string RegimeText(const RegimeChange& c) {
  return StrFormat(
      "the step time changed from %.1f ms to %.1f ms (%+.0f%%) "
      "since step %lld",
      c.before_ns / 1e6, c.after_ns / 1e6, 100 * (c.after_ns / c.before_ns - 1),
      static_cast<long long>(c.since_step));
}

}  // namespace

DetectorState::DetectorState(const OnlineOptions& o)
    : options(o),
      table(o.gpus_per_node),
      window(o.window_steps, Ns(o.window_s), kMaxWindowEntries),
      judge(options),
      cusum(o.window_steps, o.cusum_k, o.cusum_h) {}

const char* AlertNameText(AlertName name) {
  switch (name) {
    case AlertName::kStragglerPersistent:
      return "TrainingStragglerPersistent";
    case AlertName::kRankSilent:
      return "TrainingRankSilent";
    case AlertName::kRegimeChange:
      return "TrainingStepRegimeChange";
  }
  return "TrainingStragglerPersistent";
}

OnlineDetector::OnlineDetector(OnlineOptions options)
    : state_(std::make_unique<State>(options)) {}
OnlineDetector::~OnlineDetector() = default;
OnlineDetector::OnlineDetector(OnlineDetector&&) noexcept = default;
OnlineDetector& OnlineDetector::operator=(OnlineDetector&&) noexcept = default;

void OnlineDetector::SetPlace(const RankPlace& place) {
  state_->table.SetPlace(place);
}

int32_t OnlineDetector::RankCount() const { return state_->table.num_ranks(); }

namespace {

// Maps the records to rank indexes (registering new ranks; -1 for a bad
// rank or a duplicate) and returns the observed step time T and the step's
// data time: the median t_end_ns, kept monotonic, or the last data time
// plus T when the records carry none.
std::pair<int64_t, int64_t> ReadRecords(DetectorState& s,
                                        std::span<const RankStep> ranks) {
  s.record_index.assign(ranks.size(), -1);
  s.t_scratch.clear();
  int64_t step_ns = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int32_t index = s.table.Intern(ranks[i].rank);
    if (index < 0) continue;
    s.presence.Resize(s.table.num_ranks());
    if (!s.presence.Mark(index, s.serial)) continue;
    s.record_index[i] = index;
    step_ns = std::max(step_ns, ranks[i].step_ns);
    if (ranks[i].t_end_ns > 0) s.t_scratch.push_back(ranks[i].t_end_ns);
  }
  s.presence.Resize(s.table.num_ranks());
  int64_t t = s.t_ns + step_ns;
  if (!s.t_scratch.empty()) {
    const auto mid = s.t_scratch.begin() +
                     static_cast<ptrdiff_t>((s.t_scratch.size() - 1) / 2);
    std::nth_element(s.t_scratch.begin(), mid, s.t_scratch.end());
    t = *mid;
  }
  return {step_ns, std::max(t, s.t_ns)};
}

// Judged records: unflagged, a positive step, past the rank's warm-up.
void MarkJudged(DetectorState& s, std::span<const RankStep> ranks) {
  s.record_judged.assign(ranks.size(), 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int32_t index = s.record_index[i];
    if (index < 0 || ranks[i].flags != 0 || ranks[i].step_ns <= 0) continue;
    s.record_judged[i] =
        s.presence.CountUnflagged(index, s.options.warmup_steps) ? 1 : 0;
  }
}

// The per-cell and per-stage facts of the last step, and the lost time.
void Remember(DetectorState& s, const JobStep& job) {
  const auto cells = static_cast<size_t>(s.table.num_cells());
  s.last_z.assign(cells, 0);
  s.last_ratio.assign(cells, 0);
  for (const CellFacts& f : s.judge.cells()) {
    s.last_z[static_cast<size_t>(f.cell)] = static_cast<float>(f.z);
    s.last_ratio[static_cast<size_t>(f.cell)] = static_cast<float>(f.ratio);
  }
  const std::span<const double> med = s.judge.stage_median();
  s.last_stage_med.assign(med.begin(), med.end());
  if (!job.judged) return;
  const auto excess = static_cast<double>(job.step_ns - job.ideal_ns);
  const double host = std::min(static_cast<double>(job.host_ns), excess);
  s.wasted_s += excess / 1e9;
  s.lost_host_s += host / 1e9;
  s.lost_compute_s += (excess - host) / 1e9;
  s.lost_sync_s += s.judge.sync_wait_ns() / 1e9;
}

void Summarize(const DetectorState& s, const JobStep& job, StepSummary* sum) {
  sum->t_end_ns = job.t_ns;
  sum->step_ns = job.step_ns;
  sum->ideal_ns = job.ideal_ns;
  sum->worker_excess_ns = job.worker_ns;
  sum->stage_excess_ns = job.stage_ns;
  sum->last_rank = job.last_rank;
  sum->lateness_ns = std::llround(s.judge.last_lateness());
  sum->reporting = static_cast<int32_t>(
      std::count_if(s.record_index.begin(), s.record_index.end(),
                    [](int32_t i) { return i >= 0; }));
  sum->judged = job.judged;
}

// The job CUSUM on the judged step; a validated change is an event.
void WatchRegime(DetectorState& s, const JobStep& job, StepResult* out) {
  if (!job.judged) return;
  const auto change = s.cusum.Add(job.step, static_cast<double>(job.step_ns));
  if (!change) return;
  out->summary.regime_change = true;
  AlertEvent e;
  e.name = AlertName::kRegimeChange;
  e.scope = "job";
  e.step = job.step;
  e.t_ns = job.t_ns;
  e.excess_ratio = change->after_ns / change->before_ns - 1;
  e.summary = RegimeText(*change);
  s.book.Event(std::move(e), &out->events);
}

}  // namespace

StepResult OnlineDetector::CloseStep(int64_t step,
                                     std::span<const RankStep> ranks) {
  DetectorState& s = *state_;
  StepResult out;
  out.summary.step = step;
  if (step <= s.last_step) return out;  // out of order: ignored
  ++s.serial;
  const auto [step_ns, t_ns] = ReadRecords(s, ranks);
  s.newly_silent.clear();
  s.back.clear();
  s.presence.Close(s.serial, s.options.silent_steps, &s.newly_silent, &s.back);
  MarkJudged(s, ranks);
  s.window.Open(t_ns, s.table.num_cells());
  JobStep job;
  s.judge.Run(s.table,
              JudgeInput{ranks, s.record_index, s.record_judged, step_ns},
              &s.window, &job);
  job.step = step;
  job.t_ns = t_ns;
  job.step_ns = step_ns;
  const int32_t last = s.judge.last_rank();
  if (last >= 0) job.last_rank = s.table.place(last).rank;
  s.window.PutJob(job);
  Remember(s, job);
  s.t_ns = t_ns;
  s.last_step = step;
  ++s.steps_closed;
  Summarize(s, job, &out.summary);
  WatchRegime(s, job, &out);
  EvaluateAlerts(s, step, &out.events);
  return out;
}

void TopCells(const DetectorState& s, size_t k, std::vector<int32_t>* out) {
  out->clear();
  const int32_t cells = s.table.num_cells();
  // Ties go to the lower rank (the cell's first member).
  auto rank = [&](int32_t c) {
    const std::span<const int32_t> m = s.table.members(c);
    return m.empty() ? RankTable::kMaxRank + 1 : s.table.place(m.front()).rank;
  };
  auto later = [&](int32_t a, int32_t b) {
    const int64_t la = s.window.sums(a).lateness_ns;
    const int64_t lb = s.window.sums(b).lateness_ns;
    return la != lb ? la > lb : rank(a) < rank(b);
  };
  for (int32_t c = 0; c < cells; ++c) {
    const CellSums& sums = s.window.sums(c);
    // A cell whose ranks all moved away cannot be named.
    if (sums.judged == 0 || sums.lateness_ns <= 0 ||
        s.table.members(c).empty()) {
      continue;
    }
    if (out->size() == k && !later(c, out->back())) continue;
    if (out->size() == k) out->pop_back();
    out->insert(std::upper_bound(out->begin(), out->end(), c, later), c);
  }
}

int32_t NamedRank(const DetectorState& s, int32_t cell) {
  const std::span<const int32_t> members = s.table.members(cell);
  if (members.size() <= 1) return members.empty() ? -1 : members.front();
  std::vector<int64_t> counts(members.size(), 0);
  for (int32_t k = 0; k < s.window.size(); ++k) {
    const CellEntry& e = s.window.entry(k, cell);
    if (!(e.bits & kJudged)) continue;
    // Implicated steps count far more: they are what the alert is about.
    const int64_t weight = (e.bits & kImplicated) ? 1 << 20 : 1;
    counts[std::min<size_t>(e.member, members.size() - 1)] += weight;
  }
  const auto best = std::max_element(counts.begin(), counts.end());
  return s.table.Member(cell, static_cast<int32_t>(best - counts.begin()));
}

// A persistent straggler (late in half the steps), or a recurring one: late
// in fewer steps but by so much that its mean cost is twice the floor (a
// rank whose GC pauses every third step).
bool WorkerGatesHold(const DetectorState& s, const CellStats& st) {
  if (st.judged < MinJudged(s.options) ||
      st.mean_lateness_ns < s.facts.floor_ns) {
    return false;
  }
  return st.persistence >= s.options.persistence_enter ||
         (st.persistence >= s.options.recurring_share &&
          st.mean_lateness_ns >= 2 * s.facts.floor_ns);
}

JobGates GatesNow(const DetectorState& s, const std::vector<int32_t>& top) {
  bool persistent = false, in_hot = false;
  for (int32_t c : top) {
    const CellStats st = StatsOf(s.window.sums(c));
    if (st.judged < MinJudged(s.options) ||
        st.persistence < s.options.persistence_enter) {
      continue;
    }
    persistent = true;
    in_hot |= s.table.stage_of_cell(c) == s.facts.hot_stage;
  }
  return JudgeJobGates(s.facts, s.options, persistent, in_hot);
}

std::vector<int32_t> StageRanks(const DetectorState& s, int32_t stage,
                                size_t k) {
  std::vector<std::pair<double, int32_t>> busy;
  for (const CellFacts& f : s.judge.cells()) {
    if (f.stage == stage) busy.emplace_back(-f.busy, f.rank_index);
  }
  std::sort(busy.begin(), busy.end());
  std::vector<int32_t> out;
  for (size_t i = 0; i < busy.size() && i < k; ++i) {
    out.push_back(busy[i].second);
  }
  return out;
}

}  // namespace strag::diagnose::online
