// SPDX-License-Identifier: Apache-2.0
// OwnBaseline: a cell's reference against itself, for peer groups too
// small to compare (live-monitoring.md §4.2, "individual reference", as
// NVRx does): the median and spread of its recent log busy time, and the
// medians of its GC, data and compute time (to name the cause of a
// slowdown). A value enters the baseline only after kQuiet further steps
// in which the cell was not late by its own measure, so the onset of a
// slowdown is never absorbed into "normal"; a lasting new level is
// accepted once it has been quiet that long.

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_OWN_BASELINE_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_OWN_BASELINE_H_

#include <array>
#include <cstdint>

#include "diagnose/online/rolling_reference.h"

namespace strag::diagnose::online {

class OwnBaseline {
 public:
  static constexpr int32_t kQuiet = 16;

  struct Sample {
    float log_busy = 0, gc_ns = 0, data_ns = 0, compute_ns = 0;
  };

  bool ready() const { return log_busy_.ready(); }
  double log_busy() const { return log_busy_.median(); }
  // The relative spread of busy time (1.4826 MAD of log busy), floored at
  // 0.5% and at 50 us of `busy_ns`.
  double LogSigma(double busy_ns) const;
  double gc_ns() const { return gc_.median(); }
  double data_ns() const { return data_.median(); }
  double compute_ns() const { return compute_.median(); }

  // One judged step: `late` (by this baseline) discards the samples still
  // waiting; otherwise the sample waits kQuiet steps before it counts.
  void Observe(const Sample& sample, bool late);

 private:
  RollingReference log_busy_, gc_, data_, compute_;
  std::array<Sample, kQuiet> pending_{};
  int32_t pending_n_ = 0, pending_head_ = 0;
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_OWN_BASELINE_H_
