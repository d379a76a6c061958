// SPDX-License-Identifier: Apache-2.0
// Window: the last W closed steps, W = max(window_steps, the steps within
// window_s of data time), as a ring of compact per-cell entries (12 bytes:
// excesses in bfloat16) plus one job-level record per step, with running
// sums per cell and for the job that are updated as steps enter and leave.
// Sums are integers of the stored (decoded) values, so a step leaves
// exactly what it added: no drift, the same result on every replay.
//
// Memory: 12 bytes x cells x W (100k cells x 600 steps: 720 MB), W capped
// at max(window_steps, max_entries / cells). Per step: O(cells) to open a
// slot (and to evict one), O(1) per entry.

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_WINDOW_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_WINDOW_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "trace/coll_group.h"

namespace strag::diagnose::online {

// Bits of a cell's entry.
inline constexpr uint8_t kJudged = 1;      // the cell was judged this step
inline constexpr uint8_t kImplicated = 2;  // I = (last or z > 3.5) and late
inline constexpr uint8_t kLast = 4;        // its group's last arriver
inline constexpr uint8_t kIndividual = 8;  // implicated by its own baseline
inline constexpr uint8_t kAgree = 16;      // last, and the collective
                                           // inversion names it too
inline constexpr uint8_t kWorkGiven = 32;  // tokens or sum_s2 known
inline constexpr uint8_t kWorkEqual = 64;  // ... and within 5% of peers'

// One cell's facts in one step. Excesses are ns over the cell's reference
// (its peers' median, or its own baseline when kIndividual).
struct CellEntry {
  uint16_t lateness = 0;                   // bf16
  uint16_t gc = 0, data = 0, compute = 0;  // bf16
  uint16_t ratio = 0;  // busy / peers' median, 1/10000 (heatmap)
  uint8_t bits = 0;
  uint8_t member = 0;  // which member (TP rank) was the cell's max
};

struct CellSums {
  int32_t judged = 0, implicated = 0, last = 0, individual = 0, agree = 0;
  int32_t work_given = 0, work_equal = 0;  // over implicated steps
  int64_t lateness_ns = 0;                 // over judged steps
  int64_t late_impl_ns = 0, gc_impl_ns = 0, data_impl_ns = 0,
          compute_impl_ns = 0;  // over implicated steps
  int64_t ratio = 0;            // 1/10000 units, over judged steps
};

// One closed step, job-level. ns.
struct JobStep {
  int64_t step = 0, t_ns = 0;
  int64_t step_ns = 0, ideal_ns = 0, worker_ns = 0, stage_ns = 0;
  int64_t host_ns = 0;     // of worker_ns: data + GC of the last arriver
  int64_t comm_ns = 0;     // transfer above baseline, over kinds
  int32_t last_rank = -1;  // global rank with the largest lateness
  int32_t hot_stage = -1;  // stage index >= 1.05 x mean of stage medians
  float hot_ratio = 0;
  float seq_r = NAN;          // Pearson r(busy, sum_s2) this step; NaN: unknown
  uint8_t comm_elevated = 0;  // bit per trace::CollGroup
  bool judged = false;
  std::array<float, trace::kCollGroups> transfer_ns{}, baseline_ns{};
};

struct JobSums {
  int32_t judged = 0;
  int64_t step_ns = 0, ideal_ns = 0, worker_ns = 0, stage_ns = 0, host_ns = 0,
          comm_ns = 0;
  int32_t seq_n = 0;
  int64_t seq_r_micro = 0;
  int32_t comm_steps = 0;  // steps with any kind elevated
  std::array<int32_t, trace::kCollGroups> elevated{};
  std::array<int64_t, trace::kCollGroups> transfer_ns{}, baseline_ns{};
  std::vector<int32_t> hot;  // by stage index
  std::vector<int64_t> hot_ratio_micro;
  // Judged steps in which each global rank was the latest (last_rank), and
  // how many ranks were at least once.
  std::vector<int32_t> last_count;
  int32_t distinct_last = 0;
};

class Window {
 public:
  Window(int32_t window_steps, int64_t window_ns, int64_t max_entries);

  // Opens the slot of a new step at data time `t_ns` for `cells` cells
  // (all entries empty): first evicts the steps that left the window.
  void Open(int64_t t_ns, int32_t cells);
  // The open step's entry of `cell`; at most once per cell and step.
  void Put(int32_t cell, const CellEntry& entry);
  // The open step's job record.
  void PutJob(const JobStep& job);

  int32_t size() const { return len_; }  // steps held
  // Cells that joined after the window's steps (or before any step) have
  // empty sums and entries.
  const CellSums& sums(int32_t cell) const {
    static const CellSums kNone{};
    const auto c = static_cast<size_t>(cell);
    return c < sums_.size() ? sums_[c] : kNone;
  }
  const JobSums& job_sums() const { return job_sums_; }
  // k-th step held, 0 = oldest.
  const JobStep& job(int32_t k) const { return jobs_[Slot(k)]; }
  const CellEntry& entry(int32_t k, int32_t cell) const {
    static const CellEntry kNone{};
    const std::vector<CellEntry>& row = rows_[Slot(k)];
    const auto c = static_cast<size_t>(cell);
    return c < row.size() ? row[c] : kNone;
  }

 private:
  size_t Slot(int32_t k) const {
    return (head_ + static_cast<size_t>(k)) % cap_;
  }
  void Evict();
  void Grow(size_t steps, size_t cells);
  void Add(const CellEntry& e, int sign, CellSums* s) const;
  void AddJob(const JobStep& j, int sign);

  int32_t window_steps_;
  int64_t window_ns_, max_entries_;
  size_t cap_ = 0, stride_ = 0, head_ = 0;
  int32_t len_ = 0, cells_ = 0;
  // [slot][cell], stride_ cells a row: one allocation a step, so the
  // window grows in steps without copying (or doubling) the whole of it.
  std::vector<std::vector<CellEntry>> rows_;
  std::vector<JobStep> jobs_;  // [slot]
  std::vector<CellSums> sums_;
  JobSums job_sums_;
};

// Integer ns of a stored bf16 value, as the sums count it.
int64_t Bf16Ns(uint16_t b);

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_WINDOW_H_
