// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/window.h"

#include <algorithm>

#include "diagnose/online/robust_stats.h"

namespace strag::diagnose::online {

int64_t Bf16Ns(uint16_t b) {
  return static_cast<int64_t>(std::llround(FromBf16(b)));
}

Window::Window(int32_t window_steps, int64_t window_ns, int64_t max_entries)
    : window_steps_(std::max(window_steps, 1)),
      window_ns_(window_ns),
      max_entries_(max_entries) {}

void Window::Add(const CellEntry& e, int sign, CellSums* s) const {
  if (!(e.bits & kJudged)) return;
  const bool impl = e.bits & kImplicated;
  s->judged += sign;
  s->implicated += impl ? sign : 0;
  s->last += (e.bits & kLast) ? sign : 0;
  s->individual += (e.bits & kIndividual) ? sign : 0;
  s->agree += (e.bits & kAgree) ? sign : 0;
  const int64_t late = Bf16Ns(e.lateness);
  s->lateness_ns += sign * late;
  s->ratio += sign * static_cast<int64_t>(e.ratio);
  if (!impl) return;
  s->work_given += (e.bits & kWorkGiven) ? sign : 0;
  s->work_equal += (e.bits & kWorkEqual) ? sign : 0;
  s->late_impl_ns += sign * late;
  s->gc_impl_ns += sign * Bf16Ns(e.gc);
  s->data_impl_ns += sign * Bf16Ns(e.data);
  s->compute_impl_ns += sign * Bf16Ns(e.compute);
}

void Window::AddJob(const JobStep& j, int sign) {
  if (!j.judged) return;
  JobSums& s = job_sums_;
  s.judged += sign;
  s.step_ns += sign * j.step_ns;
  s.ideal_ns += sign * j.ideal_ns;
  s.worker_ns += sign * j.worker_ns;
  s.stage_ns += sign * j.stage_ns;
  s.host_ns += sign * j.host_ns;
  s.comm_ns += sign * j.comm_ns;
  if (!std::isnan(j.seq_r)) {
    s.seq_n += sign;
    s.seq_r_micro += sign * static_cast<int64_t>(std::llround(1e6 * j.seq_r));
  }
  if (j.comm_elevated) s.comm_steps += sign;
  for (size_t g = 0; g < trace::kCollGroups; ++g) {
    if (!(j.comm_elevated & (1u << g))) continue;
    s.elevated[g] += sign;
    s.transfer_ns[g] += sign * std::llround(j.transfer_ns[g]);
    s.baseline_ns[g] += sign * std::llround(j.baseline_ns[g]);
  }
  if (j.last_rank >= 0) {
    const auto r = static_cast<size_t>(j.last_rank);
    if (s.last_count.size() <= r) s.last_count.resize(r + 1, 0);
    if (sign > 0 && s.last_count[r]++ == 0) ++s.distinct_last;
    if (sign < 0 && --s.last_count[r] == 0) --s.distinct_last;
  }
  if (j.hot_stage >= 0) {
    const auto h = static_cast<size_t>(j.hot_stage);
    if (s.hot.size() <= h) {
      s.hot.resize(h + 1, 0);
      s.hot_ratio_micro.resize(h + 1, 0);
    }
    s.hot[h] += sign;
    s.hot_ratio_micro[h] +=
        sign * static_cast<int64_t>(std::llround(1e6 * j.hot_ratio));
  }
}

void Window::Evict() {
  const std::vector<CellEntry>& row = rows_[head_];
  for (size_t c = 0; c < static_cast<size_t>(cells_); ++c) {
    Add(row[c], -1, &sums_[c]);
  }
  AddJob(jobs_[head_], -1);
  head_ = (head_ + 1) % cap_;
  --len_;
}

void Window::Grow(size_t steps, size_t cells) {
  // Oldest first, then more rows, each of `cells` entries.
  std::rotate(rows_.begin(), rows_.begin() + static_cast<ptrdiff_t>(head_),
              rows_.end());
  std::rotate(jobs_.begin(), jobs_.begin() + static_cast<ptrdiff_t>(head_),
              jobs_.end());
  head_ = 0;
  rows_.resize(steps);
  jobs_.resize(steps);
  for (std::vector<CellEntry>& row : rows_) row.resize(cells);
  cap_ = steps;
  stride_ = cells;
}

void Window::Open(int64_t t_ns, int32_t cells) {
  const int64_t per_step = std::max<int64_t>(cells, 1);
  const auto max_len = static_cast<int32_t>(
      std::clamp<int64_t>(max_entries_ / per_step, window_steps_, 1 << 30));
  while (len_ > 0 &&
         ((len_ + 1 > window_steps_ && job(0).t_ns < t_ns - window_ns_) ||
          len_ + 1 > max_len)) {
    Evict();
  }
  const auto want_cells = static_cast<size_t>(cells);
  if (want_cells > stride_ || static_cast<size_t>(len_) == cap_) {
    const size_t steps = static_cast<size_t>(len_) == cap_
                             ? std::min<size_t>(std::max<size_t>(2 * cap_, 16),
                                                static_cast<size_t>(max_len))
                             : cap_;
    const size_t stride = want_cells > stride_
                              ? std::max(want_cells, stride_ + stride_ / 2)
                              : stride_;
    Grow(std::max<size_t>(steps, 1), stride);
  }
  if (sums_.size() < want_cells) sums_.resize(want_cells);
  cells_ = std::max(cells_, cells);
  const size_t slot = Slot(len_);
  std::fill(rows_[slot].begin(), rows_[slot].end(), CellEntry{});
  jobs_[slot] = JobStep{};
  ++len_;
}

void Window::Put(int32_t cell, const CellEntry& entry) {
  rows_[Slot(len_ - 1)][static_cast<size_t>(cell)] = entry;
  Add(entry, +1, &sums_[static_cast<size_t>(cell)]);
}

void Window::PutJob(const JobStep& job) {
  jobs_[Slot(len_ - 1)] = job;
  AddJob(job, +1);
}

}  // namespace strag::diagnose::online
