// SPDX-License-Identifier: Apache-2.0
#include "base/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

namespace strag {
namespace {

// Brute force: the best makespan over every assignment of items to k bins.
double BestMakespan(const std::vector<double>& c, int32_t k) {
  std::vector<double> load(static_cast<size_t>(k), 0.0);
  double best = 1e300;
  std::function<void(size_t)> go = [&](size_t i) {
    if (i == c.size()) {
      best = std::min(best, *std::max_element(load.begin(), load.end()));
      return;
    }
    for (auto& l : load) {
      l += c[i];
      go(i + 1);
      l -= c[i];
    }
  };
  go(0);
  return best;
}

TEST(PartitionTest, LptAndKkAreValidAndNearOptimal) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> len(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    const int32_t k = 2 + trial % 3;
    std::vector<double> c(7 + static_cast<size_t>(trial % 3));
    for (double& x : c) x = len(rng);
    const double opt = BestMakespan(c, k);
    for (const Partition& p : {LptPartition(c, k), KarmarkarKarp(c, k)}) {
      ASSERT_EQ(p.bin.size(), c.size());
      std::vector<double> load(static_cast<size_t>(k), 0.0);
      for (size_t i = 0; i < c.size(); ++i) {
        ASSERT_GE(p.bin[i], 0);
        ASSERT_LT(p.bin[i], k);
        load[static_cast<size_t>(p.bin[i])] += c[i];
      }
      EXPECT_DOUBLE_EQ(*std::max_element(load.begin(), load.end()), p.makespan);
      EXPECT_LE(p.lower_bound,
                opt * (1 + 1e-12));  // a certificate, never above
      EXPECT_GE(p.makespan, opt * (1 - 1e-12));
      // Graham's bound for LPT; KK is at least as good on such inputs.
      EXPECT_LE(p.makespan, (4.0 / 3 - 1.0 / (3 * k)) * opt + 1e-9);
    }
  }
}

TEST(PartitionTest, KarmarkarKarpClassicExample) {
  // {8, 7, 6, 5, 4} in two: KK gives 16 / 14 (LPT too); optimum 15 / 15.
  const std::vector<double> c = {8, 7, 6, 5, 4};
  const Partition kk = KarmarkarKarp(c, 2);
  EXPECT_DOUBLE_EQ(kk.makespan, 16);
  EXPECT_DOUBLE_EQ(kk.lower_bound, 15);
  EXPECT_NEAR(kk.Gap(), 1.0 / 15, 1e-12);
}

TEST(PartitionTest, KarmarkarKarpBalancesManyItemsToTheBound) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> len(7.0, 1.0);
  std::vector<double> c(2000);
  for (double& x : c) x = len(rng) + len(rng) * len(rng) / 6000;
  const Partition p = BestPartition(c, 32);
  EXPECT_LT(p.Gap(), 1e-3);
}

// Brute force over every split of n items into `parts` non-empty runs.
double BestContiguous(const std::vector<double>& w, int32_t parts) {
  const auto n = static_cast<int32_t>(w.size());
  double best = 1e300;
  std::vector<int32_t> cut;
  std::function<void(int32_t, int32_t, double)> go =
      [&](int32_t start, int32_t left, double worst) {
        if (left == 1) {
          double s = 0;
          for (int32_t i = start; i < n; ++i) s += w[static_cast<size_t>(i)];
          best = std::min(best, std::max(worst, s));
          return;
        }
        double s = 0;
        for (int32_t end = start + 1; end <= n - (left - 1); ++end) {
          s += w[static_cast<size_t>(end - 1)];
          go(end, left - 1, std::max(worst, s));
        }
      };
  go(0, parts, 0);
  return best;
}

TEST(PartitionTest, MinMaxContiguousIsExact) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.1, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int32_t parts = 1 + trial % 5;
    std::vector<double> w(static_cast<size_t>(parts + trial % 9));
    for (double& x : w) x = trial % 4 == 0 ? 1.0 : u(rng);
    if (trial % 3 == 0) w.back() += 9;  // a heavy loss layer
    const std::vector<int32_t> split = MinMaxContiguous(w, parts);
    ASSERT_EQ(split.size(), static_cast<size_t>(parts));
    EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0),
              static_cast<int32_t>(w.size()));
    double worst = 0;
    size_t i = 0;
    for (int32_t n : split) {
      ASSERT_GE(n, 1);
      double s = 0;
      for (int32_t k = 0; k < n; ++k) s += w[i++];
      worst = std::max(worst, s);
    }
    EXPECT_NEAR(worst, BestContiguous(w, parts), 1e-9 * worst) << trial;
  }
}

TEST(PartitionTest, MinMaxContiguousWorkedExample) {
  // 36 layers of (F, B) = (1, 2), a loss of (20, 11.4) on the last layer,
  // 4 stages (mitigations.md §2.4): the split [11, 12, 12, 1].
  std::vector<double> w(36, 3.0);
  w.back() += 31.4;
  EXPECT_EQ(MinMaxContiguous(w, 4), (std::vector<int32_t>{11, 12, 12, 1}));
}

TEST(PartitionTest, GreedyUnitsIsMinMax) {
  // One replica twice as slow, 1F1B over 4 stages, 8 microbatches each.
  const std::vector<double> t = {2, 1, 1, 1};
  const std::vector<int32_t> n = GreedyUnits(t, 32, 3);
  EXPECT_EQ(std::accumulate(n.begin(), n.end(), 0), 32);
  double worst = 0;
  for (size_t i = 0; i < t.size(); ++i)
    worst = std::max(worst, (n[i] + 3) * t[i]);
  // Brute force over n0 (the others split the rest as evenly as possible).
  double best = 1e300;
  for (int n0 = 1; n0 <= 29; ++n0) {
    const int rest = 32 - n0;
    const int top = (rest + 2) / 3;
    best = std::min(best, std::max((n0 + 3) * 2.0, (top + 3) * 1.0));
  }
  EXPECT_DOUBLE_EQ(worst, best);
}

}  // namespace
}  // namespace strag
