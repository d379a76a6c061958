// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/rolling_reference.h"

#include <span>

#include "diagnose/online/robust_stats.h"

namespace strag::diagnose::online {

void RollingReference::Push(double value) {
  values_[static_cast<size_t>(next_)] = static_cast<float>(value);
  next_ = (next_ + 1) % kCapacity;
  if (count_ < kCapacity) ++count_;
  std::array<double, kCapacity> scratch;
  const auto n = static_cast<size_t>(count_);
  for (size_t i = 0; i < n; ++i) scratch[i] = values_[i];
  const std::span<double> v(scratch.data(), n);
  median_ = MedianInPlace(v);
  mad_ = MadInPlace(v, median_);
}

}  // namespace strag::diagnose::online
