// SPDX-License-Identifier: Apache-2.0
// The command line's own logic: flags into report options (defaults, every
// error names its flag), and --rank-map.

#include "cli/report_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/kineto_input.h"

namespace strag::cli {
namespace {

Result<report::ReportOptions> Parse(std::vector<std::string> args,
                                    bool profiler = false) {
  FlagSpec spec;
  AddReportFlags(&spec);
  auto flags = Flags::Parse(args, spec);
  if (!flags.ok()) return flags.status();
  return ParseReportOptions(*flags, profiler);
}

TEST(ReportFlagsTest, Defaults) {
  const auto csv = Parse({"trace.csv"});
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  EXPECT_EQ(csv->whatif.pool, whatif::IdealPool::kOpType);
  EXPECT_EQ(csv->run_days, 1.0);
  EXPECT_FALSE(csv->gpus.has_value());
  EXPECT_FALSE(csv->timelines);
  const auto kineto = Parse({"dir"}, /*profiler=*/true);
  ASSERT_TRUE(kineto.ok());
  EXPECT_EQ(kineto->whatif.pool, whatif::IdealPool::kRole);
}

TEST(ReportFlagsTest, Values) {
  const auto o = Parse({"t.csv", "--fix", "rank=3", "--fix", "stage=1",
                        "--unfix", "dp=0", "--hours", "6", "--gpus", "64",
                        "--usd-per-gpu-hour", "1.5", "--perfetto", "p.json",
                        "--perfetto-steps", "4,7", "--threads", "2"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->whatif.fix, (std::vector<std::string>{"rank=3", "stage=1"}));
  EXPECT_EQ(o->whatif.unfix, (std::vector<std::string>{"dp=0"}));
  EXPECT_EQ(o->run_days, 0.25);
  EXPECT_EQ(o->gpus, 64);
  EXPECT_EQ(o->usd_per_gpu_hour, 1.5);
  EXPECT_TRUE(o->timelines);
  EXPECT_EQ(o->timeline_steps, (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(o->whatif.threads, 2u);
}

TEST(ReportFlagsTest, EveryErrorNamesItsFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--pool", "role"}, "--pool"},  // role: profiler traces only
      {{"--threads", "0"}, "--threads"},
      {{"--gpus", "0"}, "--gpus"},
      {{"--usd-per-gpu-hour", "-1"}, "--usd-per-gpu-hour"},
      {{"--days", "1", "--hours", "2"}, "--days or --hours"},
      {{"--hours", "0"}, "--hours"},
      {{"--perfetto-steps", "4,x"}, "--perfetto-steps"},
      {{"--top", "-2"}, "--top"},
  };
  for (const auto& [args, flag] : bad) {
    std::vector<std::string> all = {"t.csv"};
    all.insert(all.end(), args.begin(), args.end());
    const auto o = Parse(all);
    ASSERT_FALSE(o.ok()) << flag;
    EXPECT_EQ(o.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(o.status().message().find(flag), std::string::npos)
        << o.status().message();
  }
}

TEST(RankMapTest, ParsesAndRejects) {
  const auto map = ParseRankMap("a.json=3,host_1.pt.trace.json=0");
  ASSERT_TRUE(map.ok()) << map.status().message();
  EXPECT_EQ(map->at("a.json"), 3);
  EXPECT_EQ(map->at("host_1.pt.trace.json"), 0);
  EXPECT_TRUE(ParseRankMap("")->empty());
  for (const char* bad : {"a.json", "=3", "a.json=-1", "a.json=x"}) {
    const auto r = ParseRankMap(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--rank-map"), std::string::npos);
  }
}

}  // namespace
}  // namespace strag::cli
