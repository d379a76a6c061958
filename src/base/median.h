// SPDX-License-Identifier: Apache-2.0
// Median of a sample, in O(n) (nth_element).

#ifndef STRAG_SRC_BASE_MEDIAN_H_
#define STRAG_SRC_BASE_MEDIAN_H_

#include <algorithm>
#include <cstddef>
#include <vector>

namespace strag {

// The median of `v` (reordered in place): the middle value, or the mean of
// the two middle values, (lo + hi) / 2, for an even count (as numpy; the
// published what-if tool's ideal transfer times rely on that form). 0 for
// an empty `v`.
inline double Median(std::vector<double>* v) {
  if (v->empty()) return 0.0;
  const size_t mid = v->size() / 2;
  std::nth_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(mid),
                   v->end());
  const double hi = (*v)[mid];
  if (v->size() % 2 == 1) return hi;
  const double lo =
      *std::max_element(v->begin(), v->begin() + static_cast<ptrdiff_t>(mid));
  return (lo + hi) / 2.0;
}

// The lower median of `v` (reordered in place): the ((n - 1) / 2)-th
// smallest value, so that with two values it is the smaller one (a robust
// "typical" value that one slow member cannot move). 0 for an empty `v`.
inline double LowerMedian(std::vector<double>* v) {
  if (v->empty()) return 0.0;
  const auto mid = static_cast<ptrdiff_t>((v->size() - 1) / 2);
  std::nth_element(v->begin(), v->begin() + mid, v->end());
  return (*v)[static_cast<size_t>(mid)];
}

}  // namespace strag

#endif  // STRAG_SRC_BASE_MEDIAN_H_
