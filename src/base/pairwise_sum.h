// SPDX-License-Identifier: Apache-2.0
// NumPy's pairwise summation (what PairwiseMean sums with), and the same
// sum for values that arrive piece by piece in any order.
//
// The published method's means are numpy means, whose rounding depends on
// the order of the additions: a tree of blocks of 8 partial sums with
// recursion above 128 values. The tree depends only on the count, so a sum
// over values that arrive window by window (a job analysed a few steps at a
// time, whose pools are ordered node by node) can be rebuilt exactly:
// PairwiseSumAccumulator keeps one partial sum per leaf of the tree (16
// bytes per 64-128 values) instead of the values.

#ifndef STRAG_SRC_BASE_PAIRWISE_SUM_H_
#define STRAG_SRC_BASE_PAIRWISE_SUM_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/byte_pack.h"
#include "base/status.h"

namespace strag {

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

// PairwiseSum of n values given as index ranges in any order (each index
// exactly once): Sum() is bit-identical to PairwiseSum over the values
// laid out by index. Memory: 16 bytes per leaf of the tree, plus the
// leaves that ranges have only partly filled so far.
class PairwiseSumAccumulator {
 public:
  explicit PairwiseSumAccumulator(size_t n);

  // values[k] is the value at index `first + k`.
  void Add(size_t first, std::span<const double> values);
  // Requires every index added.
  double Sum() const;
  size_t size() const { return n_; }

  // What has been added so far, to merge into another accumulator of the
  // same n (the processes of one analysis, each adding its own indices):
  // after b.Merge of a's export, b is as if a's indices had been added to
  // it. Fails on bytes that are not such an export, or an index added twice.
  void Export(BytePacker* out) const;
  Status Merge(ByteUnpacker* in);

 private:
  void AddToLeaf(size_t leaf, size_t first, std::span<const double> values);
  double SumTree(size_t n, size_t* leaf) const;

  size_t n_;
  std::vector<size_t> leaf_start_;  // leaf k = [start[k], start[k + 1])
  std::vector<double> leaf_sum_;
  std::vector<uint8_t> leaf_full_;  // per leaf: its sum is in leaf_sum_
  struct Partial {
    std::vector<double> values;
    std::vector<uint8_t> has;  // per value: added
    size_t filled = 0;
  };
  std::unordered_map<size_t, Partial> partial_;  // by leaf
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_PAIRWISE_SUM_H_
