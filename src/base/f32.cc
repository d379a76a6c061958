// SPDX-License-Identifier: Apache-2.0
#include "base/f32.h"

#include <cstddef>

namespace strag {
namespace {

// Mirrors numpy's pairwise_sum (PW_BLOCKSIZE = 128, unroll 8).
template <typename T>
T PairwiseSum(const T* a, size_t n) {
  if (n < 8) {
    T sum = 0;
    for (size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    T r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    T sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  size_t half = n / 2;
  half -= half % 8;
  return PairwiseSum(a, half) + PairwiseSum(a + half, n - half);
}

}  // namespace

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
