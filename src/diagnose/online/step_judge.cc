// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/step_judge.h"

#include <algorithm>
#include <cmath>

#include "diagnose/online/robust_stats.h"

namespace strag::diagnose::online {
namespace {

constexpr double kZImplicated = 3.5;  // against peers (§4.2)
constexpr double kZIndividual = 3.0;  // against its own baseline
constexpr size_t kSmallGroup = 4;     // fewer cells: own baseline too
constexpr double kPeerNoise = 1.5;    // small groups: lateness / noise
constexpr size_t kDriftSteps = StepJudge::kDriftSteps;
constexpr double kWorkTolerance = 0.05;
constexpr double kHotStage = 1.05;
constexpr double kTransferRise = 1.2;   // transfer over its baseline
constexpr double kMinLateNs = 1e6;      // lateness floor: 1 ms ...
constexpr double kMinLateShare = 0.01;  // ... and 1% of the step

double Busy(const RankStep& r) {
  int64_t coll = 0;
  for (int64_t d : r.coll_ns) coll += std::max<int64_t>(d, 0);
  return static_cast<double>(std::max<int64_t>(r.step_ns - coll, 0));
}

float F(double x) { return static_cast<float>(x); }

double NonNegative(int64_t ns) {
  return static_cast<double>(std::max<int64_t>(ns, 0));
}

// Compute time: forward + backward + optimizer when the agent measures
// them, else the busy time less data loading and GC.
double Compute(const RankStep& r, double busy) {
  const double phases =
      NonNegative(r.fwd_ns) + NonNegative(r.bwd_ns) + NonNegative(r.opt_ns);
  if (phases > 0) return phases;
  return std::max(0.0, busy - NonNegative(r.data_ns) - NonNegative(r.gc_ns));
}

bool Within(double x, double median) {
  return std::abs(x / median - 1) <= kWorkTolerance;
}

uint16_t Ratio(double ratio) {
  return static_cast<uint16_t>(
      std::clamp(std::llround(ratio * 1e4), 0LL, 65535LL));
}

}  // namespace

double StepJudge::Floor() const {
  return std::max(kMinLateNs, kMinLateShare * static_cast<double>(step_ns_));
}

void StepJudge::CollectCells(const RankTable& table, const JudgeInput& in) {
  ++serial_;
  const auto cells = static_cast<size_t>(table.num_cells());
  if (cell_stamp_.size() < cells) {
    cell_stamp_.resize(cells, 0);
    cell_record_.resize(cells, 0);
    cell_busy_.resize(cells, 0);
  }
  judged_cells_.clear();
  for (size_t i = 0; i < in.records.size(); ++i) {
    if (in.index[i] < 0 || !in.judged[i]) continue;
    const auto c = static_cast<size_t>(table.cell_of(in.index[i]));
    const double busy = Busy(in.records[i]);
    const auto record = static_cast<int32_t>(i);
    if (cell_stamp_[c] != serial_) {
      cell_stamp_[c] = serial_;
      judged_cells_.push_back(static_cast<int32_t>(c));
    } else {
      const RankStep& held = in.records[static_cast<size_t>(cell_record_[c])];
      const bool wins =
          busy > cell_busy_[c] ||
          (busy == cell_busy_[c] && in.records[i].rank < held.rank);
      if (!wins) continue;
    }
    cell_record_[c] = record;
    cell_busy_[c] = busy;
  }
}

void StepJudge::GroupByStage(const RankTable& table, const JudgeInput& in) {
  const auto n_stages = static_cast<size_t>(table.num_stages());
  counts_.assign(n_stages + 1, 0);
  for (int32_t c : judged_cells_) {
    ++counts_[static_cast<size_t>(table.stage_of_cell(c)) + 1];
  }
  for (size_t s = 1; s <= n_stages; ++s) counts_[s] += counts_[s - 1];
  stages_.assign(n_stages, Stage{});
  for (size_t s = 0; s < n_stages; ++s) {
    stages_[s].begin = counts_[s];
    stages_[s].end = counts_[s + 1];
  }
  facts_.resize(judged_cells_.size());
  for (int32_t c : judged_cells_) {
    const auto cu = static_cast<size_t>(c);
    const int32_t stage = table.stage_of_cell(c);
    CellFacts& f =
        facts_[static_cast<size_t>(counts_[static_cast<size_t>(stage)]++)];
    f = CellFacts{};
    f.cell = c;
    f.record = cell_record_[cu];
    f.stage = stage;
    f.busy = F(cell_busy_[cu]);
    const RankStep& r = in.records[static_cast<size_t>(f.record)];
    f.gc = F(NonNegative(r.gc_ns));
    f.data = F(NonNegative(r.data_ns));
    f.compute = F(Compute(r, f.busy));
    f.tokens = F(std::max(r.tokens, 0.0));
    f.s2 = F(std::max(r.sum_s2, 0.0));
  }
}

// The median of a field over a stage's cells; `given`: only its positive
// values (tokens and sum_s2 are 0 when not measured).
double StepJudge::MedianOf(const Stage& s, float CellFacts::*field,
                           bool given) {
  scratch_.clear();
  for (int32_t k = s.begin; k < s.end; ++k) {
    const double v = facts_[static_cast<size_t>(k)].*field;
    if (!given || v > 0) scratch_.push_back(v);
  }
  return MedianInPlace(scratch_);
}

void StepJudge::StageStatistics(const JudgeInput& in, Stage* s) {
  scratch_.clear();
  for (int32_t k = s->begin; k < s->end; ++k) {
    scratch_.push_back(facts_[static_cast<size_t>(k)].busy);
  }
  s->med = MedianInPlace(scratch_);
  s->sigma = RobustSigma(MadInPlace(scratch_, s->med), s->med);
  s->gc = MedianOf(*s, &CellFacts::gc, false);
  s->data = MedianOf(*s, &CellFacts::data, false);
  s->compute = MedianOf(*s, &CellFacts::compute, false);
  bool tokens = false, s2 = false;
  for (int32_t k = s->begin; k < s->end; ++k) {
    tokens |= facts_[static_cast<size_t>(k)].tokens > 0;
    s2 |= facts_[static_cast<size_t>(k)].s2 > 0;
  }
  s->tokens = tokens ? MedianOf(*s, &CellFacts::tokens, true) : 0;
  s->s2 = s2 ? MedianOf(*s, &CellFacts::s2, true) : 0;
  Arrivals(in, s);
}

// The last arriver (argmax busy), the collective inversion's last arriver
// (argmin D_dp) and the least D_g of each kind; ties go to the lower rank,
// so the records' order does not matter.
void StepJudge::Arrivals(const JudgeInput& in, Stage* s) {
  s->transfer.fill(-1);
  const auto dp = static_cast<size_t>(trace::CollGroup::kDp);
  auto record = [&](int32_t k) -> const RankStep& {
    return in
        .records[static_cast<size_t>(facts_[static_cast<size_t>(k)].record)];
  };
  for (int32_t k = s->begin; k < s->end; ++k) {
    const CellFacts& f = facts_[static_cast<size_t>(k)];
    const RankStep& r = record(k);
    for (size_t g = 0; g < trace::kCollGroups; ++g) {
      const auto d = static_cast<double>(r.coll_ns[g]);
      if (d > 0 && (s->transfer[g] < 0 || d < s->transfer[g]))
        s->transfer[g] = d;
    }
    const float last =
        s->last < 0 ? 0 : facts_[static_cast<size_t>(s->last)].busy;
    if (s->last < 0 || f.busy > last ||
        (f.busy == last && r.rank < record(s->last).rank)) {
      s->last = k;
    }
    if (r.coll_ns[dp] <= 0) continue;
    const int64_t least = s->inverted < 0 ? 0 : record(s->inverted).coll_ns[dp];
    if (s->inverted < 0 || r.coll_ns[dp] < least ||
        (r.coll_ns[dp] == least && r.rank < record(s->inverted).rank)) {
      s->inverted = k;
    }
  }
}

void StepJudge::JudgeStage(const Stage& s) {
  const double floor = Floor();
  const bool peers = s.end - s.begin >= 2;
  const bool small = s.end - s.begin < static_cast<int32_t>(kSmallGroup);
  for (int32_t k = s.begin; k < s.end; ++k) {
    CellFacts& f = facts_[static_cast<size_t>(k)];
    f.lateness = F(f.busy - s.med);
    f.z = F(f.lateness / s.sigma);
    f.ratio = F(s.med > 0 ? f.busy / s.med : 1);
    f.gc_x = F(f.gc - s.gc);
    f.data_x = F(f.data - s.data);
    f.compute_x = F(f.compute - s.compute);
    f.bits = kJudged;
    const bool last = peers && k == s.last;
    if (last) f.bits |= kLast;
    if (last && k == s.inverted) f.bits |= kAgree;
    // Small groups: JudgeSmallStage.
    if ((last || f.z > kZImplicated) && f.lateness >= floor && !small) {
      f.bits |= kImplicated;
    }
    const bool tokens = f.tokens > 0 && s.tokens > 0;
    const bool s2 = f.s2 > 0 && s.s2 > 0;
    if (tokens || s2) f.bits |= kWorkGiven;
    if ((tokens || s2) && (!tokens || Within(f.tokens, s.tokens)) &&
        (!s2 || Within(f.s2, s.s2))) {
      f.bits |= kWorkEqual;
    }
  }
  if (!peers) return;
  const CellFacts& last = facts_[static_cast<size_t>(s.last)];
  if (last.lateness > worker_ns_) {
    worker_ns_ = last.lateness;
    host_ns_ = std::clamp<double>(last.gc_x + last.data_x, 0, last.lateness);
  }
}

OwnBaseline& StepJudge::OwnBaselineOf(int32_t cell) {
  const auto c = static_cast<size_t>(cell);
  if (ref_of_cell_.size() <= c) ref_of_cell_.resize(c + 1, -1);
  if (ref_of_cell_[c] < 0) {
    ref_of_cell_[c] = static_cast<int32_t>(refs_.size());
    refs_.emplace_back();
  }
  return refs_[static_cast<size_t>(ref_of_cell_[c])];
}

// The job's common drift over small-group cells: the lower median of busy
// / own baseline, smoothed by a median over the last kDriftSteps steps. A
// slowdown every such cell shares is a regime change, not a straggler.
double StepJudge::Drift() {
  scratch_.clear();
  for (const Stage& s : stages_) {
    if (s.end - s.begin >= static_cast<int32_t>(kSmallGroup)) continue;
    for (int32_t k = s.begin; k < s.end; ++k) {
      const CellFacts& f = facts_[static_cast<size_t>(k)];
      const OwnBaseline& ref = OwnBaselineOf(f.cell);
      if (ref.ready() && f.busy > 0) {
        scratch_.push_back(std::log(f.busy) - ref.log_busy());
      }
    }
  }
  if (scratch_.empty()) return 0;
  drifts_[drift_next_++ % drifts_.size()] = LowerMedianInPlace(scratch_);
  const size_t n = std::min(drift_next_, drifts_.size());
  std::array<double, kDriftSteps> recent;
  std::copy_n(drifts_.begin(), n, recent.begin());
  return MedianInPlace(std::span<double>(recent.data(), n));
}

// A group of fewer than 4 cells. Being last is a 1/|G| event there, so its
// last arriver is implicated only when its lateness is also beyond the
// group's own step-to-step noise (kPeerNoise x the median relative spread
// of its cells' baselines); and each cell is judged against its own
// baseline, in log space (step times are right-skewed), less the drift.
void StepJudge::JudgeSmallStage(const Stage& s, double log_drift,
                                const Window& window) {
  const double floor = Floor();
  scratch_.clear();
  for (int32_t k = s.begin; k < s.end; ++k) {
    const OwnBaseline& ref = OwnBaselineOf(facts_[static_cast<size_t>(k)].cell);
    if (ref.ready()) scratch_.push_back(ref.LogSigma(s.med));
  }
  const double noise = scratch_.empty() ? -1 : MedianInPlace(scratch_);
  for (int32_t k = s.begin; k < s.end; ++k) {
    CellFacts& f = facts_[static_cast<size_t>(k)];
    if ((f.bits & kLast) && noise > 0 && f.lateness >= floor &&
        f.lateness >= kPeerNoise * noise * s.med) {
      f.bits |= kImplicated;
    }
    JudgeOwn(log_drift, window, &f);
  }
}

// A cell against its own baseline; the excesses of a late cell are then
// measured against its own GC, data and compute times.
void StepJudge::JudgeOwn(double log_drift, const Window& window, CellFacts* f) {
  OwnBaseline& ref = OwnBaselineOf(f->cell);
  if (f->busy <= 0) return;
  const OwnBaseline::Sample x{F(std::log(f->busy)), f->gc, f->data, f->compute};
  bool late = false;
  if (ref.ready()) {
    const double excess = x.log_busy - ref.log_busy() - log_drift;
    const double z = excess / ref.LogSigma(f->busy);
    const double lateness = f->busy * (1 - std::exp(-excess));
    late = z > kZIndividual && lateness >= Floor();
    if (late) {
      f->bits |= kImplicated | kIndividual;
      f->z = F(std::max<double>(f->z, z));
    }
    if (late && lateness > f->lateness) {
      f->lateness = F(lateness);
      f->gc_x = F(x.gc_ns - ref.gc_ns());
      f->data_x = F(x.data_ns - ref.data_ns());
      f->compute_x = F(x.compute_ns - ref.compute_ns());
    }
  }
  // Also frozen while the cell is often late by its own measure.
  const CellSums& sums = window.sums(f->cell);
  const bool frozen =
      sums.judged > 0 &&
      sums.individual >= options_.persistence_exit * sums.judged;
  ref.Observe(x, late || frozen);
}

void StepJudge::JudgeIndividually(const Window& window) {
  const double log_drift = Drift();
  for (const Stage& s : stages_) {
    const int32_t n = s.end - s.begin;
    if (n > 0 && n < static_cast<int32_t>(kSmallGroup)) {
      JudgeSmallStage(s, log_drift, window);
    }
  }
}

void StepJudge::StageExcess(JobStep* job) {
  stage_med_.assign(stages_.size(), -1);
  double sum = 0, max = 0;
  int32_t p = 0, hot = -1;
  for (size_t s = 0; s < stages_.size(); ++s) {
    if (stages_[s].end == stages_[s].begin) continue;
    stage_med_[s] = stages_[s].med;
    sum += stages_[s].med;
    ++p;
    if (hot < 0 || stages_[s].med > max) {
      max = stages_[s].med;
      hot = static_cast<int32_t>(s);
    }
  }
  if (p < 2) return;
  const double mean = sum / p;
  const double m = std::max(options_.microbatches, 1);
  job->stage_ns = std::llround((m + p - 1) / m * (max - mean));
  if (mean > 0 && max >= kHotStage * mean) {
    job->hot_stage = hot;
    job->hot_ratio = static_cast<float>(max / mean);
  }
}

// The transfer time of each collective kind, per pipeline stage: the least
// D_g of the stage's cells (its last arriver waited for nobody), against
// that stage's own baseline, so that a slow link that slows one stage's
// collectives is not outvoted by the others. The step's rise is the largest
// over stages. PP sends are left out: a receive waits for the sending
// stage, so no member's time is a pure transfer. A baseline takes the
// values that are not elevated, until the window's share of elevated steps
// reaches persistence_exit, then freezes.
void StepJudge::Transfers(const Window& window, JobStep* job) {
  const double floor = Floor();
  const JobSums& sums = window.job_sums();
  if (transfer_ref_.size() < stages_.size()) transfer_ref_.resize(stages_.size());
  for (size_t g = 0; g < trace::kCollGroups; ++g) {
    if (g == static_cast<size_t>(trace::CollGroup::kPp)) continue;
    const bool learn = sums.elevated[g] < options_.persistence_exit * sums.judged ||
                       sums.judged == 0;
    double best_rise = 0, best_transfer = 0, best_base = 0;
    for (size_t si = 0; si < stages_.size(); ++si) {
      const Stage& st = stages_[si];
      if (st.end - st.begin < 2 || st.transfer[g] <= 0) continue;
      const double transfer = st.transfer[g];
      RollingReference& ref = transfer_ref_[si][g];
      const double base = ref.median();
      const double rise = transfer - base;
      const bool elevated =
          ref.ready() && transfer >= kTransferRise * base && rise >= floor &&
          rise > kZIndividual * RobustSigma(ref.mad(), base);
      if (elevated && rise > best_rise) {
        best_rise = rise;
        best_transfer = transfer;
        best_base = base;
      }
      // An elevated value is never learnt: the 48-value baseline would take
      // a lasting slowdown in as its new normal long before the window's
      // share of elevated steps could freeze it.
      if (learn && !elevated) ref.Push(transfer);
    }
    if (best_rise > 0) {
      job->comm_elevated |= static_cast<uint8_t>(1u << g);
      job->comm_ns += std::llround(best_rise);
      job->transfer_ns[g] = static_cast<float>(best_transfer);
      job->baseline_ns[g] = static_cast<float>(best_base);
    }
  }
}

// Names each cell's member, finds the step's latest cell, measures r(busy,
// sum_s2) and the waits in collectives, and puts the entries.
void StepJudge::Finish(const RankTable& table, const JudgeInput& in,
                       Window* window, JobStep* job) {
  last_rank_ = -1;
  last_lateness_ = sync_wait_ns_ = 0;
  PearsonSums pearson;
  for (CellFacts& f : facts_) {
    const RankStep& r = in.records[static_cast<size_t>(f.record)];
    f.rank_index = in.index[static_cast<size_t>(f.record)];
    f.member =
        static_cast<uint8_t>(std::min(table.MemberPos(f.rank_index), 255));
    const Stage& s = stages_[static_cast<size_t>(f.stage)];
    if (last_rank_ < 0 || f.lateness > last_lateness_) {
      last_rank_ = f.rank_index;
      last_lateness_ = f.lateness;
    }
    if (f.s2 > 0 && s.s2 > 0 && s.med > 0) pearson.Add(f.ratio, f.s2 / s.s2);
    for (size_t g = 0; g < trace::kCollGroups; ++g) {
      if (s.transfer[g] > 0) {
        sync_wait_ns_ +=
            std::max(0.0, static_cast<double>(r.coll_ns[g]) - s.transfer[g]);
      }
    }
    window->Put(f.cell, CellEntry{ToBf16(f.lateness), ToBf16(f.gc_x),
                                  ToBf16(f.data_x), ToBf16(f.compute_x),
                                  Ratio(f.ratio), f.bits, f.member});
  }
  if (!facts_.empty()) sync_wait_ns_ /= static_cast<double>(facts_.size());
  if (pearson.n >= 3) job->seq_r = static_cast<float>(pearson.R());
}

void StepJudge::Run(const RankTable& table, const JudgeInput& in,
                    Window* window, JobStep* job) {
  step_ns_ = in.step_ns;
  worker_ns_ = host_ns_ = 0;
  CollectCells(table, in);
  GroupByStage(table, in);
  for (Stage& s : stages_) {
    if (s.end == s.begin) continue;
    StageStatistics(in, &s);
    JudgeStage(s);
  }
  JudgeIndividually(*window);
  Finish(table, in, window, job);
  job->judged = !facts_.empty();
  job->worker_ns = std::llround(worker_ns_);
  job->host_ns = std::llround(host_ns_);
  StageExcess(job);
  Transfers(*window, job);
  job->ideal_ns =
      std::max<int64_t>(0, in.step_ns - job->worker_ns - job->stage_ns);
}

}  // namespace strag::diagnose::online
