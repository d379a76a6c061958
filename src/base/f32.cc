// SPDX-License-Identifier: Apache-2.0
#include "base/f32.h"

#include <cstddef>

#include "base/pairwise_sum.h"

namespace strag {

float PairwiseMeanF32(std::span<const float> values) {
  if (values.empty()) return 0.0f;
  return PairwiseSum(values.data(), values.size()) /
         static_cast<float>(values.size());
}

double PairwiseMean(std::span<const double> values) {
  if (values.empty()) return 0.0;
  return PairwiseSum(values.data(), values.size()) /
         static_cast<double>(values.size());
}

}  // namespace strag
