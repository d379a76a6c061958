// SPDX-License-Identifier: Apache-2.0
// Single-precision helpers for the published what-if method, whose
// preprocessing is IEEE binary32 arithmetic (whatif-spec.md §2, §4, §8).

#ifndef STRAG_SRC_BASE_F32_H_
#define STRAG_SRC_BASE_F32_H_

#include <span>

namespace strag {

// fl32(x): round to nearest binary32.
inline float Fl32(double x) { return static_cast<float>(x); }

// NumPy's float32 mean: pairwise summation in float32 (blocks of 8 partial
// sums, recursion above 128 values), divided by the count in float32.
float PairwiseMeanF32(std::span<const float> values);

// NumPy's float64 mean (pairwise summation in float64).
double PairwiseMean(std::span<const double> values);

}  // namespace strag

#endif  // STRAG_SRC_BASE_F32_H_
