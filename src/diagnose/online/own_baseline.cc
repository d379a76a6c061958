// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/own_baseline.h"

#include <algorithm>

#include "diagnose/online/robust_stats.h"

namespace strag::diagnose::online {

double OwnBaseline::LogSigma(double busy_ns) const {
  return std::max({kMadToSigma * log_busy_.mad(), 0.005,
                   busy_ns > 0 ? 50e3 / busy_ns : 1.0});
}

void OwnBaseline::Observe(const Sample& sample, bool late) {
  if (late) {
    pending_n_ = 0;
    return;
  }
  if (pending_n_ == kQuiet) {
    const Sample& old = pending_[static_cast<size_t>(pending_head_)];
    log_busy_.Push(old.log_busy);
    gc_.Push(old.gc_ns);
    data_.Push(old.data_ns);
    compute_.Push(old.compute_ns);
    pending_head_ = (pending_head_ + 1) % kQuiet;
    --pending_n_;
  }
  pending_[static_cast<size_t>((pending_head_ + pending_n_) % kQuiet)] = sample;
  ++pending_n_;
}

}  // namespace strag::diagnose::online
