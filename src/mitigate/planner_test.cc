// SPDX-License-Identifier: Apache-2.0
#include "mitigate/planner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strag::mitigate {
namespace {

PlanRow Row(std::string policy, double net, Family family,
            Semantics semantics = Semantics::kIdentical, bool noise = false) {
  PlanRow r;
  r.policy = std::move(policy);
  r.net_gpu_hours = net;
  r.family = family;
  r.effects.semantics = semantics;
  r.within_noise = noise;
  return r;
}

std::vector<std::string> Order(const std::vector<PlanRow>& rows) {
  std::vector<std::string> out;
  for (const PlanRow& r : rows) out.push_back(r.policy);
  return out;
}

TEST(RankRowsTest, NetGainFirstNoiseLast) {
  std::vector<PlanRow> rows = {
      Row("noise", 900, Family::kBalance, Semantics::kIdentical, true),
      Row("small", 10, Family::kBalance),
      Row("big", 500, Family::kOperational),
  };
  RankRows(1, &rows);
  EXPECT_EQ(Order(rows), (std::vector<std::string>{"big", "small", "noise"}));
}

TEST(RankRowsTest, FixesThatChangeTheTrainingGoBelow) {
  std::vector<PlanRow> rows = {
      Row("async", 900, Family::kDropAsync, Semantics::kStaleness),
      Row("drop", 800, Family::kDropAsync, Semantics::kBatchNoise),
      Row("balance", 100, Family::kBalance, Semantics::kDataOrder),
      Row("evict", 50, Family::kOperational),
  };
  RankRows(1, &rows);
  EXPECT_EQ(Order(rows),
            (std::vector<std::string>{"balance", "evict", "async", "drop"}));
}

TEST(RankRowsTest, TiesGoToTheGentlerFix) {
  // Within the band: identical semantics before data order, then the
  // playbook's family order, then fewer extra GPUs, then no restart.
  std::vector<PlanRow> rows = {
      Row("evict", 103, Family::kOperational),
      Row("seq", 102, Family::kBalance, Semantics::kDataOrder),
      Row("stage", 101, Family::kBalance),
  };
  RankRows(5, &rows);
  EXPECT_EQ(Order(rows), (std::vector<std::string>{"stage", "evict", "seq"}));
  // Outside the band the gain decides.
  RankRows(0.5, &rows);
  EXPECT_EQ(Order(rows), (std::vector<std::string>{"evict", "seq", "stage"}));
  PlanRow no_restart = Row("resplit", 100, Family::kBalance);
  PlanRow restart = Row("repartition", 100.5, Family::kBalance);
  restart.effects.restart = true;
  rows = {restart, no_restart};
  RankRows(1, &rows);
  EXPECT_EQ(Order(rows), (std::vector<std::string>{"resplit", "repartition"}));
}

}  // namespace
}  // namespace strag::mitigate
