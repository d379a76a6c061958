// SPDX-License-Identifier: Apache-2.0
// Golden numbers for every trace of ../shared/data/hta-kineto (real
// torch.profiler output, see ../shared/data/SOURCES.md), cross-checked with
// an independent Python script (json + gzip + decimal): per file the rank
// and world size, events, steps, GPU ops, kernels, NCCL collectives by type
// (SendRecv kernels typed by the CPU op that launched them), the first GPU
// op's start and the sum of GPU op durations in exact nanoseconds; and
// the CPU ops that launched the GPU ops.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ingest/kineto/kineto_file.h"

namespace strag::ingest {
namespace {

struct Golden {
  const char* file;  // under hta-kineto/
  int32_t rank;
  int32_t world_size;
  int64_t events;
  std::vector<int64_t> step_ids;
  size_t gpu_ops;
  size_t kernels;
  std::map<std::string, int64_t> nccl;  // by OpTypeName
  int64_t first_gpu_ns;
  int64_t gpu_dur_ns;
};

const std::vector<Golden>& Goldens() {
  static const std::vector<Golden> goldens = {
      {"amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
       0,
       0,
       220,
       {1, 2},
       16,
       14,
       {},
       1739836029603454206,
       149042},
      {"df_index_resolver/df_index_resolver.json.gz",
       1,
       2,
       216092,
       {2, 3, 4, 5, 6},
       22290,
       19370,
       {{"all-reduce", 2020}},
       1669783687389324000,
       1000613000},
      {"nccl_parser_config/nccl_data.json.gz",
       0,
       2,
       40573,
       {4, 5, 6},
       3774,
       2700,
       {{"all-reduce", 15}, {"broadcast", 6}},
       1716423322422880181,
       165185838},
      {"negative_queue_length_values_check/rank0.json.gz",
       0,
       16,
       108936,
       {550, 551, 552, 553, 554},
       7747,
       6080,
       {{"all-gather", 10},
        {"all-reduce", 10},
        {"all-to-all", 45},
        {"other-comm", 5},
        {"reduce-scatter", 10}},
       1683564901549715000,
       449763000},
      {"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
       0,
       1,
       68692,
       {101, 102, 103, 104, 105},
       6095,
       4350,
       {},
       1712195495505582988,
       472454441},
      {"sampled-2of128/sampled_rank-0.json.gz",
       0,
       128,
       4855,
       {551, 552},
       1204,
       1154,
       {{"all-gather", 2}, {"all-reduce", 4}, {"all-to-all", 4}},
       1682725898082228000,
       607844000},
      {"sampled-2of128/sampled_rank-1.json.gz",
       1,
       128,
       4720,
       {551, 552},
       1154,
       1104,
       {{"all-gather", 2}, {"all-reduce", 4}, {"all-to-all", 4}},
       1682725898082381000,
       667530000},
      {"trace_diff/control/control.json.gz",
       3,
       8,
       109123,
       {1009, 1010, 1011, 1012, 1013, 1014},
       9450,
       8568,
       {{"all-reduce", 18}, {"all-to-all", 42}},
       1661203462599325000,
       501567000},
      {"trace_diff/test/test.json.gz",
       1,
       2,
       105167,
       {1009, 1010, 1011, 1012, 1013, 1014},
       15632,
       9876,
       {{"all-reduce", 21}, {"all-to-all", 42}, {"other-comm", 1}},
       1661938466265125000,
       963762000},
  };
  return goldens;
}

std::string DataDir() {
  return std::string(STRAG_SHARED_DATA_DIR) + "/hta-kineto";
}

#define SKIP_WITHOUT_DATA()                                      \
  if (!std::filesystem::exists(DataDir())) {                     \
    GTEST_SKIP() << "reference data not found at " << DataDir(); \
  }

Result<trace::RankTrace> Read(const std::string& file) {
  ReadKinetoOptions options;
  options.parse.default_rank = 0;  // the AMD trace says no rank
  return ReadKinetoFile(DataDir() + "/" + file, options);
}

bool HasWarning(const trace::RankTrace& t, std::string_view text) {
  return std::any_of(
      t.warnings.begin(), t.warnings.end(),
      [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST(KinetoGoldenTest, EveryGpuTrace) {
  SKIP_WITHOUT_DATA();
  for (const Golden& g : Goldens()) {
    SCOPED_TRACE(g.file);
    const Result<trace::RankTrace> read = Read(g.file);
    ASSERT_TRUE(read.ok()) << read.status().message();
    const trace::RankTrace& t = *read;
    EXPECT_EQ(t.rank, g.rank);
    EXPECT_EQ(t.world_size, g.world_size);
    EXPECT_EQ(t.events, g.events);
    EXPECT_FALSE(t.cpu_only);
    std::vector<int64_t> ids;
    for (const trace::StepSpan& s : t.steps) ids.push_back(s.id);
    EXPECT_EQ(ids, g.step_ids);
    EXPECT_EQ(t.size(), g.gpu_ops);
    size_t kernels = 0;
    int64_t first = t.size() > 0 ? t.start_ns[0] : 0;
    int64_t dur = 0;
    std::map<std::string, int64_t> nccl;
    for (size_t i = 0; i < t.size(); ++i) {
      const std::string& name = t.names[t.name[i]];
      if (name.rfind("Memcpy", 0) != 0 && name.rfind("Memset", 0) != 0) {
        ++kernels;
      }
      first = std::min(first, t.start_ns[i]);
      dur += t.dur_ns[i];
      if (t.comm[i] >= 0) {
        ++nccl[std::string(
            trace::OpTypeName(t.comms[static_cast<size_t>(t.comm[i])].kind))];
      }
    }
    EXPECT_EQ(kernels, g.kernels);
    EXPECT_EQ(nccl, g.nccl);
    EXPECT_EQ(first, g.first_gpu_ns);
    EXPECT_EQ(dur, g.gpu_dur_ns);
  }
}

// The CPU op that launched each GPU op (RankTrace::launch_op), cross-checked
// with an independent Python script (the latest-starting, then shortest
// cpu_op on the launch's thread that holds its ts): GPU ops with one, and
// the op that launched the most (ties: the first name).
TEST(KinetoGoldenTest, LaunchingCpuOps) {
  SKIP_WITHOUT_DATA();
  struct LaunchGolden {
    const char* file;
    size_t launched;
    const char* top_op;
    int64_t top_count;
  };
  const LaunchGolden goldens[] = {
      {"amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 16, "aten::add_",
       2},  // ties: the first name
      {"df_index_resolver/df_index_resolver.json.gz", 22290, "aten::add_",
       4040},
      {"nccl_parser_config/nccl_data.json.gz", 3774,
       "aten::convolution_backward", 1005},
      {"negative_queue_length_values_check/rank0.json.gz", 6785, "aten::copy_",
       1365},
      {"ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 6095,
       "aten::copy_", 1600},
      {"sampled-2of128/sampled_rank-0.json.gz", 1188, "aten::mm", 233},
      {"sampled-2of128/sampled_rank-1.json.gz", 1138, "aten::mm", 233},
      {"trace_diff/control/control.json.gz", 9402, "aten::mm", 1692},
      {"trace_diff/test/test.json.gz", 14970, "aten::copy_", 5190},
  };
  for (const LaunchGolden& g : goldens) {
    SCOPED_TRACE(g.file);
    const Result<trace::RankTrace> read = Read(g.file);
    ASSERT_TRUE(read.ok()) << read.status().message();
    const trace::RankTrace& t = *read;
    std::map<std::string, int64_t> by_op;
    size_t launched = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const uint32_t op = t.LaunchOp(i);
      if (op == trace::RankTrace::kNoLaunchOp) continue;
      ++launched;
      ++by_op[t.names[op]];
    }
    EXPECT_EQ(launched, g.launched);
    const auto top = std::max_element(
        by_op.begin(), by_op.end(),
        [](const auto& a, const auto& b) { return a.second < b.second; });
    ASSERT_NE(top, by_op.end());
    EXPECT_EQ(top->first, g.top_op);
    EXPECT_EQ(top->second, g.top_count);
  }
}

TEST(KinetoGoldenTest, AmdTraceHasNoRank) {
  SKIP_WITHOUT_DATA();
  const std::string path =
      DataDir() + "/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz";
  EXPECT_EQ(ReadKinetoFile(path).status().message(),
            path +
                ": no rank: the trace has no distributedInfo.rank and the "
                "file name no 'rank<N>'");
}

// The process groups and args of a trace that has them.
TEST(KinetoGoldenTest, NcclDataGroupsAndArgs) {
  SKIP_WITHOUT_DATA();
  const Result<trace::RankTrace> read =
      Read("nccl_parser_config/nccl_data.json.gz");
  ASSERT_TRUE(read.ok()) << read.status().message();
  const trace::RankTrace& t = *read;
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].name, "0");
  EXPECT_EQ(t.groups[0].desc, "default_pg");
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int32_t>{0, 1}));
  for (const trace::CommOp& op : t.comms) {
    EXPECT_EQ(op.group, 0);
    EXPECT_EQ(op.group_size, 2);
    EXPECT_GT(op.in_nelems, 0);
  }
  for (size_t i = 0; i < t.size(); ++i) EXPECT_GE(t.launch_ns[i], 0);
}

// gloo on CPUs, 300 ranks, 10 process groups: compute rows are the CPU ops
// of the step thread, comm rows the gloo ops on their two threads.
TEST(KinetoGoldenTest, CpuOnlyGlooTrace) {
  SKIP_WITHOUT_DATA();
  const Result<trace::RankTrace> read =
      Read("cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  ASSERT_TRUE(read.ok()) << read.status().message();
  const trace::RankTrace& t = *read;
  EXPECT_TRUE(t.cpu_only);
  EXPECT_EQ(t.rank, 34);
  EXPECT_EQ(t.world_size, 300);
  EXPECT_EQ(t.backend, "gloo");
  EXPECT_EQ(t.events, 30);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].id, 551);
  EXPECT_EQ(t.groups.size(), 11u);
  EXPECT_EQ(t.size(), 14u);
  EXPECT_EQ(t.comms.size(), 10u);
  std::map<int32_t, int> gloo_streams;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.comm[i] >= 0) {
      ++gloo_streams[t.stream[i]];
      EXPECT_EQ(t.comms[static_cast<size_t>(t.comm[i])].kind,
                trace::OpType::kAllReduce);
      EXPECT_EQ(t.launch_ns[i], -1);  // no c10d op in this trace
    } else {
      EXPECT_EQ(t.stream[i], 1074);
    }
  }
  EXPECT_EQ(gloo_streams, (std::map<int32_t, int>{{3553, 5}, {3554, 5}}));
  EXPECT_TRUE(HasWarning(t, "10 gloo ops have no c10d op that queued them"));
}

// The thinned 2-of-128 pair: what the reader can tell from one rank is said
// (SendRecv kernels typed by their CPU ops), nothing is invented.
TEST(KinetoGoldenTest, SampledPairImportsWithHonestWarnings) {
  SKIP_WITHOUT_DATA();
  for (const char* file : {"sampled-2of128/sampled_rank-0.json.gz",
                           "sampled-2of128/sampled_rank-1.json.gz"}) {
    SCOPED_TRACE(file);
    const Result<trace::RankTrace> read = Read(file);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_TRUE(HasWarning(*read,
                           "10 NCCL kernels that do not name their "
                           "collective (SendRecv, Generic) are typed "
                           "after the CPU op that launched them "
                           "(4 all-reduce, 2 all-gather, 4 all-to-all)"));
    for (const trace::CommOp& op : read->comms) {
      EXPECT_EQ(op.group, -1);  // the trace names no group
      EXPECT_EQ(op.seq, -1);
      EXPECT_EQ(op.group_size, 0);
    }
  }
}

// What is missing from the other real traces is said, not made up.
TEST(KinetoGoldenTest, MissingEventsAreWarnedAbout) {
  SKIP_WITHOUT_DATA();
  const Result<trace::RankTrace> one_rank =
      Read("ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  ASSERT_TRUE(one_rank.ok());
  EXPECT_TRUE(HasWarning(*one_rank,
                         "35 CPU-side collective calls have no "
                         "NCCL kernel in the trace (25 all-reduce, "
                         "10 broadcast)"));
  const Result<trace::RankTrace> test = Read("trace_diff/test/test.json.gz");
  ASSERT_TRUE(test.ok());
  EXPECT_TRUE(HasWarning(*test, "614 of 15632 GPU ops have no launch event"));
  EXPECT_TRUE(HasWarning(*test, "4 NCCL kernels have no launch event"));
}

}  // namespace
}  // namespace strag::ingest
