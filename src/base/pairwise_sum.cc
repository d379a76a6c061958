// SPDX-License-Identifier: Apache-2.0
#include "base/pairwise_sum.h"

#include <algorithm>

#include "base/check.h"

namespace strag {
namespace {

// The leaves of PairwiseSum's recursion over [first, first + n), in order.
void Leaves(size_t first, size_t n, std::vector<size_t>* starts) {
  if (n <= 128) {
    starts->push_back(first);
    return;
  }
  size_t half = n / 2;
  half -= half % 8;
  Leaves(first, half, starts);
  Leaves(first + half, n - half, starts);
}

}  // namespace

PairwiseSumAccumulator::PairwiseSumAccumulator(size_t n) : n_(n) {
  Leaves(0, n, &leaf_start_);
  leaf_start_.push_back(n);
  leaf_sum_.assign(leaf_start_.size() - 1, 0.0);
}

void PairwiseSumAccumulator::Add(size_t first, std::span<const double> values) {
  STRAG_CHECK(first + values.size() <= n_, "PairwiseSumAccumulator: past n");
  if (values.empty()) return;
  size_t leaf = static_cast<size_t>(
      std::upper_bound(leaf_start_.begin(), leaf_start_.end(), first) -
      leaf_start_.begin() - 1);
  while (!values.empty()) {
    const size_t end = leaf_start_[leaf + 1];
    const size_t take = std::min(values.size(), end - first);
    AddToLeaf(leaf, first, values.first(take));
    values = values.subspan(take);
    first += take;
    ++leaf;
  }
}

// A whole leaf is summed at once; a part is kept until the leaf is full.
void PairwiseSumAccumulator::AddToLeaf(size_t leaf, size_t first,
                                       std::span<const double> values) {
  const size_t start = leaf_start_[leaf];
  const size_t size = leaf_start_[leaf + 1] - start;
  if (values.size() == size) {
    leaf_sum_[leaf] = PairwiseSum(values.data(), size);
    return;
  }
  Partial& p = partial_[leaf];
  if (p.values.empty()) p.values.assign(size, 0.0);
  std::copy(values.begin(), values.end(),
            p.values.begin() + static_cast<ptrdiff_t>(first - start));
  p.filled += values.size();
  if (p.filled == size) {
    leaf_sum_[leaf] = PairwiseSum(p.values.data(), size);
    partial_.erase(leaf);
  }
}

// The recursion of PairwiseSum with the leaves' sums in place of leaves.
double PairwiseSumAccumulator::SumTree(size_t n, size_t* leaf) const {
  if (n <= 128) return leaf_sum_[(*leaf)++];
  size_t half = n / 2;
  half -= half % 8;
  const double left = SumTree(half, leaf);
  return left + SumTree(n - half, leaf);
}

double PairwiseSumAccumulator::Sum() const {
  STRAG_CHECK(partial_.empty(), "PairwiseSumAccumulator: a leaf is not full");
  size_t leaf = 0;
  return SumTree(n_, &leaf);
}

}  // namespace strag
