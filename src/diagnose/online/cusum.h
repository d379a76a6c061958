// SPDX-License-Identifier: Apache-2.0
// RegimeCusum: a one-sided CUSUM (Page 1954) on the job's log step time
// against a frozen baseline, for "the job got slower" regime changes
// (live-monitoring.md §4.3).
//
// The baseline is the median of the first `baseline_steps` values and the
// spread of their upper half (1.4826 x the median deviation above the
// median: step times are right-skewed and this chart watches the upper
// tail), floored at 1% of the step so that a perfectly steady job does not
// call every millisecond a shift. Per value z = (x - mu) / sigma clipped to
// +-4, S = max(0, S + z - k); S > h is an alarm. An alarm is validated as
// Greyhound does before it is reported: the run that raised it (the values
// since S last left 0) is at least 20 values long and its median is above
// the baseline by max(3%, 2 sigma) and above the baseline's 90th
// percentile (a job with frequent spikes clusters them by chance);
// otherwise it is noise, S restarts and the baseline stays. A reported change
// restarts S and collects a fresh baseline from the new regime. Under iid noise
// this keeps healthy jobs free of events for far longer than the plain ARL0
// (18.7k steps at h = 8).

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_CUSUM_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_CUSUM_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace strag::diagnose::online {

struct RegimeChange {
  int64_t since_step = 0;  // first step of the run that raised it
  double before_ns = 0;    // baseline step time (its median)
  double after_ns = 0;     // median step time of the run
};

class RegimeCusum {
 public:
  RegimeCusum(int32_t baseline_steps, double k, double h);

  // One judged step's observed step time (ns > 0). Returns the change it
  // completes, if any.
  std::optional<RegimeChange> Add(int64_t step, double step_ns);

 private:
  void Restart();

  int32_t baseline_steps_;
  double k_, h_;
  std::vector<double> baseline_;  // log values while collecting
  bool frozen_ = false;
  double mu_ = 0, sigma_ = 0, p90_ = 0;
  double s_ = 0;
  int64_t run_start_ = -1;
  std::vector<double> run_;  // log values since S left 0
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_CUSUM_H_
