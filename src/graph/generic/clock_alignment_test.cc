// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/clock_alignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

namespace strag::graph {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kEpoch = 1'700'000'000'000'000'000;  // ns since 1970

// Simulated job: rank r's clock reads true time - offset[r], so the offset
// that aligns it is offset[r] (relative to rank 0's).
struct Job {
  std::vector<int64_t> offset;
  std::mt19937_64 rng{42};
  CollectiveEnds ends;
  int64_t now = kEpoch;

  explicit Job(size_t ranks, int64_t max_offset) : offset(ranks) {
    std::uniform_int_distribution<int64_t> d(-max_offset, max_offset);
    for (auto& o : offset) o = d(rng);
  }
  // One collective of `members` ending at a fresh true time, each member's
  // end off by up to `noise` (uniform) plus `late` for `late_rank`.
  void Collective(const std::vector<int32_t>& members, int64_t noise,
                  int32_t late_rank = -1, int64_t late = 0) {
    now += 3 * kMs;
    std::uniform_int_distribution<int64_t> d(-noise, noise);
    for (int32_t r : members) {
      const int64_t extra = r == late_rank ? late : 0;
      ends.Add(r, now + d(rng) + extra - offset[static_cast<size_t>(r)]);
    }
    ends.Close();
  }
  // Largest error of the recovered offsets against the truth relative to
  // `anchor` (the rank fixed at 0).
  int64_t MaxError(const ClockAlignment& a, size_t anchor = 0) const {
    int64_t worst = 0;
    for (size_t r = 0; r < offset.size(); ++r) {
      const int64_t truth = offset[r] - offset[anchor];
      worst = std::max(worst, std::abs(a.offset_ns[r] - truth));
    }
    return worst;
  }
  // The same over `ranks` only (anchored at rank 0).
  int64_t MaxErrorOf(const ClockAlignment& a,
                     const std::vector<size_t>& ranks) const {
    int64_t worst = 0;
    for (size_t r : ranks) {
      const int64_t truth = offset[r] - offset[0];
      worst = std::max(worst, std::abs(a.offset_ns[r] - truth));
    }
    return worst;
  }
};

std::vector<int32_t> Range(int32_t lo, int32_t hi) {
  std::vector<int32_t> v;
  for (int32_t r = lo; r < hi; ++r) v.push_back(r);
  return v;
}

TEST(ClockAlignmentTest, TwoRanksExact) {
  Job job(2, 50 * kMs);
  for (int i = 0; i < 5; ++i) job.Collective({0, 1}, 0);
  const ClockAlignment a = AlignClocks(2, job.ends);
  EXPECT_EQ(job.MaxError(a), 0);
  EXPECT_EQ(a.offset_ns[0], 0);
  EXPECT_TRUE(a.converged);
  EXPECT_EQ(a.collectives, 5);
  EXPECT_EQ(a.residual_max_ns, 0);
  EXPECT_EQ(a.anchor, (std::vector<int32_t>{0, 0}));
}

// The acceptance target: 64 ranks, offsets up to +/-50 ms, ends within a few
// us, DP groups of 8 plus a global collective: offsets within 10 us.
TEST(ClockAlignmentTest, SixtyFourRanksWithNoise) {
  Job job(64, 50 * kMs);
  for (int step = 0; step < 10; ++step) {
    for (int32_t g = 0; g < 8; ++g) {
      job.Collective(Range(8 * g, 8 * g + 8), 3 * kUs);
    }
    job.Collective(Range(0, 64), 3 * kUs);
  }
  const ClockAlignment a = AlignClocks(64, job.ends);
  EXPECT_LT(job.MaxError(a), 10 * kUs);
  EXPECT_TRUE(a.converged) << a.last_change_ns;
  EXPECT_LE(a.residual_max_ns, 6 * kUs);
  EXPECT_LE(a.residual_p99_ns, a.residual_max_ns);
  EXPECT_EQ(a.collectives, 90);
  EXPECT_EQ(a.collectives_of_rank[5], 20);
}

// Ranks connected only through a chain of pairs (pipeline sends): offsets
// propagate along the chain without drifting.
TEST(ClockAlignmentTest, ChainOfPairs) {
  Job job(16, 50 * kMs);
  for (int i = 0; i < 20; ++i) {
    for (int32_t r = 0; r + 1 < 16; ++r) job.Collective({r, r + 1}, 2 * kUs);
  }
  const ClockAlignment a = AlignClocks(16, job.ends);
  EXPECT_LT(job.MaxError(a), 10 * kUs);
}

// Subgroups only joined through one rank each (TP pairs bridged by a DP
// group of their first ranks).
TEST(ClockAlignmentTest, SubgroupsBridged) {
  Job job(8, 50 * kMs);
  for (int i = 0; i < 10; ++i) {
    for (int32_t g = 0; g < 4; ++g) job.Collective({2 * g, 2 * g + 1}, kUs);
    job.Collective({0, 2, 4, 6}, kUs);
  }
  const ClockAlignment a = AlignClocks(8, job.ends);
  EXPECT_LT(job.MaxError(a), 10 * kUs);
}

// A rank that ends 1 ms late in every 25th collective (a slow kernel
// exit) does not pull the offsets: medians ignore it.
TEST(ClockAlignmentTest, RobustToLateMembers) {
  Job job(8, 50 * kMs);
  for (int i = 0; i < 50; ++i) {
    job.Collective(Range(0, 8), 2 * kUs, i % 25 == 0 ? 3 : -1, kMs);
  }
  const ClockAlignment a = AlignClocks(8, job.ends);
  EXPECT_LT(job.MaxError(a), 10 * kUs);
  EXPECT_GE(a.residual_max_ns, 900 * kUs);  // the late ends show up here
  EXPECT_LT(a.residual_p99_ns, 900 * kUs);
}

// {0,1} and {2,3} never meet; rank 4 is in no collective; rank 5 only in
// collectives of one member. Each set is anchored at its lowest rank.
TEST(ClockAlignmentTest, DisconnectedSets) {
  Job job(6, 50 * kMs);
  for (int i = 0; i < 3; ++i) {
    job.Collective({0, 1}, 0);
    job.Collective({3, 2, 3}, 0);  // a rank listed twice counts once
    job.Collective({5}, 0);
  }
  const ClockAlignment a = AlignClocks(6, job.ends);
  EXPECT_EQ(a.anchor, (std::vector<int32_t>{0, 0, 2, 2, -1, -1}));
  EXPECT_EQ(a.offset_ns[1], job.offset[1] - job.offset[0]);
  EXPECT_EQ(a.offset_ns[2], 0);
  EXPECT_EQ(a.offset_ns[3], job.offset[3] - job.offset[2]);
  EXPECT_EQ(a.offset_ns[4], 0);
  EXPECT_EQ(a.offset_ns[5], 0);
  EXPECT_EQ(a.collectives, 6);
}

// {0,5}, {1,6}, then {2,5,6}: one connected set; a union-find that links
// the first member's root twice would leave {0,5} apart.
TEST(ClockAlignmentTest, SetJoinedByALaterCollective) {
  Job job(7, 50 * kMs);
  for (int i = 0; i < 3; ++i) {
    job.Collective({0, 5}, 0);
    job.Collective({1, 6}, 0);
    job.Collective({2, 5, 6}, 0);
  }
  const ClockAlignment a = AlignClocks(7, job.ends);
  EXPECT_EQ(a.anchor, (std::vector<int32_t>{0, 0, 0, -1, -1, 0, 0}));
  EXPECT_EQ(job.MaxErrorOf(a, {0, 1, 2, 5, 6}), 0);
}

TEST(ClockAlignmentTest, NoCollectives) {
  const ClockAlignment a = AlignClocks(3, CollectiveEnds{});
  EXPECT_EQ(a.offset_ns, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(a.anchor, (std::vector<int32_t>{-1, -1, -1}));
  EXPECT_TRUE(a.converged);
  EXPECT_EQ(a.collectives, 0);
}

}  // namespace
}  // namespace strag::graph
