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
  leaf_full_.assign(leaf_sum_.size(), 0);
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
    leaf_full_[leaf] = 1;
    return;
  }
  Partial& p = partial_[leaf];
  if (p.values.empty()) {
    p.values.assign(size, 0.0);
    p.has.assign(size, 0);
  }
  const auto at = static_cast<ptrdiff_t>(first - start);
  std::copy(values.begin(), values.end(), p.values.begin() + at);
  std::fill_n(p.has.begin() + at, values.size(), uint8_t{1});
  p.filled += values.size();
  if (p.filled == size) {
    leaf_sum_[leaf] = PairwiseSum(p.values.data(), size);
    leaf_full_[leaf] = 1;
    partial_.erase(leaf);
  }
}

// Full leaves as (leaf, sum); partial ones as (leaf, its added indices and
// their values).
void PairwiseSumAccumulator::Export(BytePacker* out) const {
  std::vector<uint64_t> full;
  std::vector<double> sums;
  for (size_t k = 0; k < leaf_full_.size(); ++k) {
    if (!leaf_full_[k]) continue;
    full.push_back(k);
    sums.push_back(leaf_sum_[k]);
  }
  out->PutArray<uint64_t>(full);
  out->PutArray<double>(sums);
  out->Put<uint64_t>(partial_.size());
  for (const auto& [leaf, p] : partial_) {
    std::vector<uint64_t> index;
    std::vector<double> values;
    for (size_t i = 0; i < p.has.size(); ++i) {
      if (!p.has[i]) continue;
      index.push_back(leaf_start_[leaf] + i);
      values.push_back(p.values[i]);
    }
    out->PutArray<uint64_t>(index);
    out->PutArray<double>(values);
  }
}

Status PairwiseSumAccumulator::Merge(ByteUnpacker* in) {
  const auto bad = [](const char* what) {
    return Internal(std::string("PairwiseSumAccumulator::Merge: ") + what);
  };
  const std::vector<uint64_t> full = in->GetArray<uint64_t>();
  const std::vector<double> sums = in->GetArray<double>();
  if (!in->ok() || full.size() != sums.size()) return bad("damaged bytes");
  for (size_t k = 0; k < full.size(); ++k) {
    const size_t leaf = full[k];
    if (leaf >= leaf_full_.size() || leaf_full_[leaf] || partial_.count(leaf)) {
      return bad("a leaf added twice");
    }
    leaf_sum_[leaf] = sums[k];
    leaf_full_[leaf] = 1;
  }
  const uint64_t partials = in->Get<uint64_t>();
  for (uint64_t k = 0; k < partials && in->ok(); ++k) {
    const std::vector<uint64_t> index = in->GetArray<uint64_t>();
    const std::vector<double> values = in->GetArray<double>();
    if (!in->ok() || index.size() != values.size()) return bad("damaged bytes");
    for (size_t i = 0; i < index.size(); ++i) {
      if (index[i] >= n_) return bad("an index past n");
      const size_t leaf = static_cast<size_t>(
          std::upper_bound(leaf_start_.begin(), leaf_start_.end(), index[i]) -
          leaf_start_.begin() - 1);
      auto p = partial_.find(leaf);
      if (leaf_full_[leaf] ||
          (p != partial_.end() && p->second.has[index[i] - leaf_start_[leaf]])) {
        return bad("an index added twice");
      }
      AddToLeaf(leaf, index[i], std::span<const double>(&values[i], 1));
    }
  }
  return in->ok() ? Status::Ok() : bad("damaged bytes");
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
