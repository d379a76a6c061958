// SPDX-License-Identifier: Apache-2.0
// Small robust statistics for the online detector: in-place medians and
// MADs over reused buffers (O(n), nth_element), the robust z's scale, a
// compact float encoding for the window, and a Pearson accumulator.

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_ROBUST_STATS_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_ROBUST_STATS_H_

#include <cstdint>
#include <span>

namespace strag::diagnose::online {

// 1.4826 MAD estimates the standard deviation of a normal sample.
inline constexpr double kMadToSigma = 1.4826;

// The median of `v`, reordered in place: the middle value, or the mean of
// the two middle values for an even count; 0 when empty. O(n).
double MedianInPlace(std::span<double> v);
// The lower median ((n - 1) / 2-th smallest): with two values the smaller,
// so one slow member cannot move it. 0 when empty. O(n).
double LowerMedianInPlace(std::span<double> v);
// The median absolute deviation of `v` from `median`; overwrites `v`.
double MadInPlace(std::span<double> v, double median);
// The robust z's denominator, ns: 1.4826 max(MAD, 0.005 |median|, 50 us).
// The floors keep identical work (MAD 0) from making every nanosecond an
// outlier.
double RobustSigma(double mad_ns, double median_ns);

// bfloat16 (the high half of a float, rounded to nearest even): 3
// significant digits, the range of a float, 2 bytes. The window stores its
// per-step excesses this way; sums over it are of the decoded values, so
// adding and later subtracting an entry is exact.
uint16_t ToBf16(float x);
float FromBf16(uint16_t b);

// Running sums for Pearson's r; r is 0 with fewer than 3 points or no
// spread.
struct PearsonSums {
  double n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  void Add(double x, double y);
  double R() const;
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_ROBUST_STATS_H_
