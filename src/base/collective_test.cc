// SPDX-License-Identifier: Apache-2.0
// ThreadCollective, the shares of a job's steps, and the gathers built on
// AllGather.

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "base/collective.h"
#include "base/collective_ops.h"
#include "base/thread_collective.h"

namespace strag {
namespace {

TEST(CollectiveTest, SharesTileInOrder) {
  for (size_t n : {0, 1, 5, 11, 100}) {
    for (size_t k : {1, 2, 3, 4, 7}) {
      size_t next = 0;
      for (size_t r = 0; r < k; ++r) {
        const Share s = ShareOf(n, r, k);
        EXPECT_EQ(s.first, next);
        EXPECT_LE(s.end - s.first, n / k + 1);
        EXPECT_GE(s.end - s.first, n / k);
        next = s.end;
      }
      EXPECT_EQ(next, n);
    }
  }
}

// Many rounds back to back (a fast thread must not overtake a round), every
// process seeing every process's bytes in process order.
TEST(CollectiveTest, ThreadsGatherInProcessOrder) {
  std::mutex mu;
  std::vector<std::string> failures;
  ThreadCollective::Run(4, [&](Collective& c) {
    for (int round = 0; round < 200; ++round) {
      auto all = c.AllGather(std::to_string(round) + ":" +
                             std::to_string(c.rank()));
      bool right = all.ok() && all->size() == 4;
      for (size_t p = 0; right && p < 4; ++p) {
        right = (*all)[p] == std::to_string(round) + ":" + std::to_string(p);
      }
      if (!right) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back("rank " + std::to_string(c.rank()) + " round " +
                           std::to_string(round));
      }
    }
  });
  EXPECT_TRUE(failures.empty()) << failures.front();
}

TEST(CollectiveTest, ConcatAndValues) {
  std::vector<std::vector<double>> a(3), b(3);
  std::vector<std::vector<int>> values(3);
  ThreadCollective::Run(3, [&](Collective& c) {
    const size_t r = c.rank();
    std::vector<double> x(r + 1, static_cast<double>(r)),
        y = {10.0 + static_cast<double>(r)};
    ASSERT_TRUE(AllGatherConcat<double>(&c, {&x, &y}).ok());
    a[r] = x, b[r] = y;
    auto v = AllGatherValue<int>(&c, static_cast<int>(r * r));
    ASSERT_TRUE(v.ok());
    values[r] = *v;
  });
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(a[r], (std::vector<double>{0, 1, 1, 2, 2, 2}));
    EXPECT_EQ(b[r], (std::vector<double>{10, 11, 12}));
    EXPECT_EQ(values[r], (std::vector<int>{0, 1, 4}));
  }
}

// The personal exchange: [p] of process q's result is what p sent to q
// (the default, over AllGather), empty messages and a wrong count too.
TEST(CollectiveTest, AllToAllDeliversEachItsOwn) {
  std::vector<std::vector<std::string>> got(4);
  std::vector<int> refused(4);  // not vector<bool>: threads set their own
  ThreadCollective::Run(4, [&](Collective& c) {
    std::vector<std::string> to(4);
    for (size_t q = 0; q < 4; ++q) {
      if (q != 2) to[q] = std::to_string(c.rank()) + ">" + std::to_string(q);
    }
    auto all = c.AllToAll(std::move(to));
    ASSERT_TRUE(all.ok());
    got[c.rank()] = *all;
    refused[c.rank()] = !c.AllToAll({"one"}).ok();
  });
  for (size_t q = 0; q < 4; ++q) {
    for (size_t p = 0; p < 4; ++p) {
      EXPECT_EQ(got[q][p],
                q == 2 ? "" : std::to_string(p) + ">" + std::to_string(q));
    }
    EXPECT_TRUE(refused[q]);
  }
}

}  // namespace
}  // namespace strag
