// SPDX-License-Identifier: Apache-2.0
#include "base/pairwise_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace strag {
namespace {

// Values whose sums round differently in different orders.
std::vector<double> Values(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng) * std::pow(10.0, static_cast<int>(rng() % 9) - 4);
  return v;
}

// Ranges in a shuffled order (node-major pools filled window by window
// arrive this way), cut anywhere: the sum is PairwiseSum's, bit for bit.
TEST(PairwiseSumAccumulatorTest, AnyOrderOfRangesGivesPairwiseSum) {
  for (size_t n : {0, 1, 7, 8, 9, 127, 128, 129, 136, 1000, 4099, 100000}) {
    const std::vector<double> v = Values(n, n);
    const double expected = PairwiseSum(v.data(), n);
    std::mt19937_64 rng(n + 1);
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<std::pair<size_t, size_t>> ranges;
      for (size_t at = 0; at < n;) {
        const size_t len = std::min<size_t>(n - at, 1 + rng() % 300);
        ranges.emplace_back(at, len);
        at += len;
      }
      std::shuffle(ranges.begin(), ranges.end(), rng);
      PairwiseSumAccumulator acc(n);
      for (const auto& [at, len] : ranges) {
        acc.Add(at, std::span<const double>(v).subspan(at, len));
      }
      EXPECT_EQ(std::bit_cast<uint64_t>(acc.Sum()),
                std::bit_cast<uint64_t>(expected))
          << n << " values, trial " << trial;
    }
  }
}

// The order matters (so the test above can fail): summing the same values
// left to right differs from the pairwise sum.
TEST(PairwiseSumAccumulatorTest, OrderMattersForTheseValues) {
  const std::vector<double> v = Values(100000, 3);
  double left_to_right = 0;
  for (double x : v) left_to_right += x;
  EXPECT_NE(left_to_right, PairwiseSum(v.data(), v.size()));
}

// Processes each add their own ranges, then every export is merged into
// one: the sum is the whole's; an index given twice is refused.
TEST(PairwiseSumAccumulatorTest, MergedPartsGivePairwiseSum) {
  for (size_t n : {1, 9, 129, 1000, 4099}) {
    const std::vector<double> v = Values(n, n + 7);
    for (size_t parts : {2, 3, 5}) {
      std::vector<PairwiseSumAccumulator> acc(parts, PairwiseSumAccumulator(n));
      // Cut at odd places (inside leaves), each part's range in two adds.
      for (size_t p = 0; p < parts; ++p) {
        const size_t lo = n * p / parts, hi = n * (p + 1) / parts;
        const size_t mid = lo + (hi - lo) / 3;
        acc[p].Add(mid, std::span(v).subspan(mid, hi - mid));
        acc[p].Add(lo, std::span(v).subspan(lo, mid - lo));
      }
      for (size_t p = 1; p < parts; ++p) {
        BytePacker out;
        acc[p].Export(&out);
        const std::string bytes = out.Take();
        ByteUnpacker in(bytes);
        ASSERT_TRUE(acc[0].Merge(&in).ok());
      }
      EXPECT_EQ(std::bit_cast<uint64_t>(acc[0].Sum()),
                std::bit_cast<uint64_t>(PairwiseSum(v.data(), n)))
          << n << " in " << parts;
    }
  }
  PairwiseSumAccumulator a(300), b(300);
  const std::vector<double> v = Values(300, 1);
  a.Add(0, std::span(v).subspan(0, 200));
  b.Add(150, std::span(v).subspan(150, 150));
  BytePacker out;
  b.Export(&out);
  const std::string bytes = out.Take();
  ByteUnpacker in(bytes);
  EXPECT_FALSE(a.Merge(&in).ok());  // [150, 200) twice
  ByteUnpacker damaged(std::string_view(bytes).substr(0, bytes.size() / 2));
  PairwiseSumAccumulator c(300);
  EXPECT_FALSE(c.Merge(&damaged).ok());
}

}  // namespace
}  // namespace strag
