// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ingest/kineto/kineto_test_util.h"

namespace strag::ingest {
namespace {

using kineto::RankTraceDifference;
using trace::OpType;

// A GPU trace with one of everything: a step, a kernel and a memcpy with
// their launches, three NCCL kernels (args on the CPU op, a SendRecv typed
// by its CPU op, args on the kernel itself and no launch), a collective
// whose kernel is missing, and events to skip.
const char* const kGpuTrace = R"js({
 "schemaVersion": 1,
 "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 4,
   "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1, 2, 3]}]},
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 10, "tid": 10, "ts": 1000, "dur": 500},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 0, "tid": 7, "ts": 1001, "dur": 400},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 1010, "dur": 20, "args": {"External id": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1015.5, "dur": 3, "args": {"correlation": 100}},
  {"ph": "s", "id": 100, "pid": 10, "tid": 10, "ts": 1015.5, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1020.25, "dur": 30.125, "args": {"stream": 7, "correlation": 100}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 9, "ts": 1060, "dur": 5, "args": {"correlation": 101}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 10, "ts": 1040, "dur": 2, "args": {"correlation": 101}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 10, "tid": 10, "ts": 1100, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 10, "tid": 10, "ts": 1101, "dur": 48, "args": {"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 4, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3]", "Seq": 5}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 10, "tid": 10, "ts": 1102, "dur": 40},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 10, "tid": 10, "ts": 1110, "dur": 5, "args": {"correlation": 102}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 20, "ts": 1120, "dur": 100, "args": {"stream": 20, "correlation": 102}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 10, "tid": 10, "ts": 1200, "dur": 30, "args": {"Collective name": "all_to_all", "In msg nelems": 8, "Out msg nelems": 8, "Group size": 2, "Process Group Name": "1", "Process Group Ranks": "[1, 3]", "Seq": 2}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_to_all", "pid": 10, "tid": 10, "ts": 1201, "dur": 20},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1205, "dur": 5, "args": {"correlation": 103}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(x)", "pid": 0, "tid": 21, "ts": 1230, "dur": 40, "args": {"stream": 21, "correlation": 103}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)", "pid": 0, "tid": 20, "ts": 1300, "dur": 10, "args": {"stream": 20, "correlation": 999, "Collective name": "broadcast", "In msg nelems": 53, "Out msg nelems": 53, "Group size": 4, "Process Group Name": "0"}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::_allgather_base_", "pid": 10, "tid": 10, "ts": 1400, "dur": 10},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:_all_gather_base", "pid": 10, "tid": 10, "ts": 1401, "dur": 8},
  {"name": "process_name", "ph": "M", "pid": 10, "tid": 0, "args": {"name": "python"}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 10, "tid": 10, "ts": 1400, "s": "t"},
  {"ph": "X", "cat": "python_function", "name": "foo.py(1): f", "pid": 10, "tid": 10, "ts": 1000, "dur": 1},
  {"ph": "X", "cat": "mystery", "name": "m", "pid": 10, "tid": 10, "ts": 1000, "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "bad", "pid": 0, "tid": 7, "ts": 1500, "dur": -2},
  {"ph": "X", "cat": "kernel", "name": "no dur", "pid": 0, "tid": 7, "ts": 1500},
  "not an event"
 ],
 "displayTimeUnit": "ns",
 "baseTimeNanoseconds": 1000000000
})js";

constexpr int64_t kBase = 1000000000;

trace::RankTrace ParseOk(std::string_view json, std::string_view source,
                         const KinetoOptions& options = {}) {
  Result<trace::RankTrace> trace = ParseKinetoTrace(json, source, options);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  return trace.ok() ? std::move(trace).value() : trace::RankTrace();
}

std::string ErrorOf(std::string_view json, std::string_view source = "t.json",
                    const KinetoOptions& options = {}) {
  Result<trace::RankTrace> trace = ParseKinetoTrace(json, source, options);
  return trace.ok() ? "" : trace.status().message();
}

int64_t Skipped(const trace::RankTrace& t, const std::string& reason) {
  for (const auto& [r, count] : t.skipped) {
    if (r == reason) return count;
  }
  return 0;
}

int64_t SkippedTotal(const trace::RankTrace& t) {
  int64_t total = 0;
  for (const auto& entry : t.skipped) total += entry.second;
  return total;
}

// The row named `name` (the first one).
size_t Row(const trace::RankTrace& t, std::string_view name) {
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.names[t.name[i]] == name) return i;
  }
  ADD_FAILURE() << "no row " << name;
  return 0;
}

bool HasWarning(const trace::RankTrace& t, std::string_view text) {
  return std::any_of(
      t.warnings.begin(), t.warnings.end(),
      [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST(KinetoParserTest, GpuTraceRowsAndMetadata) {
  const trace::RankTrace t = ParseOk(kGpuTrace, "t.json");
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.world_size, 4);
  EXPECT_EQ(t.backend, "nccl");
  EXPECT_FALSE(t.cpu_only);
  EXPECT_EQ(t.events, 27);
  ASSERT_EQ(t.size(), 5u);
  ASSERT_EQ(t.steps.size(), 1u);  // not the gpu_user_annotation copy
  EXPECT_EQ(t.steps[0].id, 7);
  EXPECT_EQ(t.steps[0].start_ns, kBase + 1000000);
  EXPECT_EQ(t.steps[0].end_ns, kBase + 1500000);

  const size_t gemm = Row(t, "gemm");
  EXPECT_EQ(t.start_ns[gemm], kBase + 1020250);  // fractional us, exactly
  EXPECT_EQ(t.dur_ns[gemm], 30125);
  EXPECT_EQ(t.launch_ns[gemm], kBase + 1015500);
  EXPECT_EQ(t.stream[gemm], 7);
  EXPECT_EQ(t.comm[gemm], -1);
  const size_t memcpy = Row(t, "Memcpy HtoD");
  EXPECT_EQ(t.stream[memcpy], 9);  // no args.stream: the tid
  EXPECT_EQ(t.launch_ns[memcpy], kBase + 1040000);
}

TEST(KinetoParserTest, NcclKernelsAndTheirCollectives) {
  const trace::RankTrace t = ParseOk(kGpuTrace, "t.json");
  ASSERT_EQ(t.comms.size(), 3u);
  // Groups: from the args as met, filled in by pg_config.
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].name, "0");
  EXPECT_EQ(t.groups[0].desc, "default_pg");
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(t.groups[1].name, "1");
  EXPECT_EQ(t.groups[1].ranks, (std::vector<int32_t>{1, 3}));

  const size_t all_reduce =
      Row(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)");
  ASSERT_GE(t.comm[all_reduce], 0);
  const trace::CommOp& ar = t.comms[static_cast<size_t>(t.comm[all_reduce])];
  EXPECT_EQ(ar.kind, OpType::kAllReduce);
  EXPECT_EQ(ar.group, 0);
  EXPECT_EQ(ar.seq, 5);
  EXPECT_EQ(ar.in_nelems, 1024);
  EXPECT_EQ(ar.out_nelems, 1024);
  EXPECT_EQ(ar.group_size, 4);
  EXPECT_EQ(t.launch_ns[all_reduce], kBase + 1110000);
  EXPECT_EQ(t.stream[all_reduce], 20);

  const size_t send_recv = Row(t, "ncclDevKernel_SendRecv(x)");
  const trace::CommOp& a2a = t.comms[static_cast<size_t>(t.comm[send_recv])];
  EXPECT_EQ(a2a.kind, OpType::kAllToAll);  // from the CPU op around its launch
  EXPECT_EQ(a2a.group, 1);
  EXPECT_EQ(a2a.seq, 2);
  EXPECT_EQ(a2a.group_size, 2);

  const size_t broadcast = Row(t, "ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)");
  const trace::CommOp& bc = t.comms[static_cast<size_t>(t.comm[broadcast])];
  EXPECT_EQ(bc.kind, OpType::kBroadcast);  // from its name and own args
  EXPECT_EQ(bc.group, 0);
  EXPECT_EQ(bc.in_nelems, 53);
  EXPECT_EQ(bc.seq, -1);
  EXPECT_EQ(t.launch_ns[broadcast], -1);

  EXPECT_TRUE(HasWarning(t, "t.json: 1 of 5 GPU ops have no launch event"));
  EXPECT_TRUE(HasWarning(t, "t.json: 1 NCCL kernels have no launch event"));
  EXPECT_TRUE(HasWarning(t,
                         "typed after the CPU op that launched them "
                         "(1 all-to-all)"));
  EXPECT_TRUE(HasWarning(t,
                         "t.json: 1 CPU-side collective calls have no "
                         "NCCL kernel in the trace (1 all-gather)"));
}

// Every event is counted, and everything not used is counted by reason.
TEST(KinetoParserTest, SkippedEventsAreCountedByReason) {
  const std::string json = kGpuTrace;
  const trace::RankTrace t = ParseOk(json, "t.json");
  EXPECT_EQ(Skipped(t, "CPU op (a GPU trace: its rows are GPU ops)"), 1);
  EXPECT_EQ(Skipped(t, "category 'gpu_user_annotation'"), 1);
  EXPECT_EQ(Skipped(t, "category 'python_function'"), 1);
  EXPECT_EQ(Skipped(t, "unknown category 'mystery'"), 1);
  EXPECT_EQ(Skipped(t, "metadata (ph 'M')"), 1);
  EXPECT_EQ(Skipped(t, "instant event (ph 'i')"), 1);
  EXPECT_EQ(Skipped(t, "flow event (ph 's', 't', 'f')"), 1);
  EXPECT_EQ(Skipped(t, "negative dur"), 1);
  EXPECT_EQ(Skipped(t, "dur missing"), 1);
  EXPECT_EQ(Skipped(t, "not an object"), 1);
  // Used: 1 step, 5 GPU ops, 4 launches, 7 CPU comm ops.
  EXPECT_EQ(SkippedTotal(t) + 17, t.events);
  const size_t bad = json.find(R"({"ph": "X", "cat": "kernel", "name": "bad")");
  EXPECT_TRUE(HasWarning(t, "t.json: byte " + std::to_string(bad) +
                                ": event 'bad' has a negative duration (-2 "
                                "us): skipped"));
}

// displayTimeUnit is for display only; without baseTimeNanoseconds the
// times are the file's.
TEST(KinetoParserTest, TimeUnitsAndBaseTime) {
  const std::string events =
      R"([{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1712195495519695.812, "dur": 0.5}])";
  const trace::RankTrace ns =
      ParseOk(R"({"displayTimeUnit": "ns", "traceEvents": )" + events + "}",
              "rank0.json");
  ASSERT_EQ(ns.size(), 1u);
  EXPECT_EQ(ns.start_ns[0], 1712195495519695812);
  EXPECT_EQ(ns.dur_ns[0], 500);
  const trace::RankTrace ms =
      ParseOk(R"({"traceEvents": )" + events + R"(, "displayTimeUnit": "ms"})",
              "rank0.json");
  EXPECT_EQ(ms.start_ns[0], 1712195495519695812);
  const trace::RankTrace based = ParseOk(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.5, "dur": 1}], "baseTimeNanoseconds": 1719853884000000000})",
      "rank0.json");
  EXPECT_EQ(based.start_ns[0], 1719853884000001500);
}

TEST(KinetoParserTest, RankFromDistributedInfoFileNameOrOption) {
  const std::string no_info =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}]})";
  EXPECT_EQ(ParseOk(no_info, "/x/rank-12.Jul_15.pt.trace.json").rank, 12);
  EXPECT_EQ(ParseOk(no_info, "/x/rank-12.json").world_size, 0);
  EXPECT_EQ(ErrorOf(no_info, "/x/trace.json"),
            "/x/trace.json: no rank: the trace has no distributedInfo.rank "
            "and the file name no 'rank<N>'");
  KinetoOptions options;
  options.default_rank = 0;
  const trace::RankTrace assumed = ParseOk(no_info, "/x/trace.json", options);
  EXPECT_EQ(assumed.rank, 0);
  EXPECT_TRUE(HasWarning(assumed, "taken as rank 0"));
  // distributedInfo wins over the name, before or after the events.
  EXPECT_EQ(
      ParseOk(
          R"({"traceEvents": [], "distributedInfo": {"rank": 3, "world_size": 8}})",
          "rank-5.json")
          .rank,
      3);
  EXPECT_EQ(
      ErrorOf(
          R"({"distributedInfo": {"rank": 8, "world_size": 8}, "traceEvents": []})"),
      "t.json: rank 8 is not in [0, world size 8)");
}

// A CPU-only gloo trace as newer torch writes it: compute rows are the
// top-level CPU ops of the step thread; gloo ops on their own threads are
// the comm rows, launched by the k-th c10d op of their kind.
TEST(KinetoParserTest, CpuOnlyGlooTrace) {
  const char* json =
      R"({"distributedInfo": {"backend": "gloo", "rank": 0, "world_size": 2},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 5, "tid": 5, "ts": 0, "dur": 1000},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 5, "tid": 5, "ts": 10, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 5, "tid": 5, "ts": 20, "dur": 80},
  {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 5, "tid": 5, "ts": 200, "dur": 300},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 5, "tid": 5, "ts": 450, "dur": 20},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 5, "tid": 5, "ts": 600, "dur": 20},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 5, "tid": 77, "ts": 460, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 5, "tid": 78, "ts": 610, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 5, "tid": 99, "ts": 10, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "Optimizer.step#SGD.step", "pid": 5, "tid": 5, "ts": 700, "dur": 200}
  ]})";
  const trace::RankTrace t = ParseOk(json, "t.json");
  EXPECT_TRUE(t.cpu_only);
  EXPECT_EQ(t.backend, "gloo");
  ASSERT_EQ(t.size(), 5u);
  const size_t linear = Row(t, "aten::linear");
  EXPECT_EQ(t.stream[linear], 5);
  EXPECT_EQ(t.dur_ns[linear], 100000);
  EXPECT_EQ(t.launch_ns[linear], -1);
  Row(t, "autograd::engine::evaluate_function: AddmmBackward0");
  Row(t, "Optimizer.step#SGD.step");
  std::vector<size_t> gloo;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.comm[i] >= 0) gloo.push_back(i);
  }
  ASSERT_EQ(gloo.size(), 2u);
  std::sort(gloo.begin(), gloo.end(),
            [&](size_t a, size_t b) { return t.start_ns[a] < t.start_ns[b]; });
  EXPECT_EQ(t.stream[gloo[0]], 77);
  EXPECT_EQ(t.launch_ns[gloo[0]], 450000);
  EXPECT_EQ(t.stream[gloo[1]], 78);
  EXPECT_EQ(t.launch_ns[gloo[1]], 600000);
  EXPECT_EQ(t.comms[static_cast<size_t>(t.comm[gloo[0]])].kind,
            OpType::kAllReduce);
  EXPECT_EQ(Skipped(t, "CPU op inside another op or off the step threads"), 2);
  EXPECT_TRUE(t.warnings.empty());
}

// torch 1.13 (Debian's python3-torch): a bare list, no categories, pid
// "CPU functions", times from the process start, gloo ops on threads 2 and
// 3; the last gloo op ended after the profiler stopped.
TEST(KinetoParserTest, Torch113BareList) {
  const char* json =
      R"([{"name": "aten::zeros", "ph": "X", "ts": 288, "dur": 79, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "ProfilerStep#1", "ph": "X", "ts": 387, "dur": 19556, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "DistributedDataParallel.forward", "ph": "X", "ts": 620, "dur": 3312, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "aten::linear", "ph": "X", "ts": 801, "dur": 2806, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "c10d::allreduce_", "ph": "X", "ts": 8362, "dur": 847, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "gloo:all_reduce", "ph": "X", "ts": 8447, "dur": 10998, "tid": 3, "pid": "CPU functions", "args": {}},
{"name": "ProfilerStep#2", "ph": "X", "ts": 19987, "dur": 19628, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "c10d::allreduce_", "ph": "X", "ts": 27701, "dur": 35, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "gloo:all_reduce", "ph": "X", "ts": 27800, "dur": 11393, "tid": 2, "pid": "CPU functions", "args": {}},
{"name": "c10d::allreduce_", "ph": "X", "ts": 46393, "dur": 164, "tid": 1, "pid": "CPU functions", "args": {}}
])";
  const trace::RankTrace t = ParseOk(json, "/out/rank-0.pt.trace.json");
  EXPECT_EQ(t.rank, 0);
  EXPECT_EQ(t.world_size, 0);
  EXPECT_TRUE(t.cpu_only);
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.steps[1].start_ns, 19987000);
  ASSERT_EQ(t.size(), 4u);  // zeros, forward, 2 gloo ops
  EXPECT_EQ(t.stream[Row(t, "aten::zeros")], 1);
  const size_t gloo = Row(t, "gloo:all_reduce");
  EXPECT_EQ(t.launch_ns[gloo], 8362000);
  EXPECT_EQ(t.stream[gloo], 3);
  EXPECT_TRUE(HasWarning(t,
                         "3 CPU all-reduce calls but 2 gloo ops: the last "
                         "1 calls have no gloo op in the trace"));
}

// Without gloo ops (NCCL traced without kernels), the outermost CPU comm
// ops of known collectives are the comm rows; waits are not.
TEST(KinetoParserTest, CpuOnlyWithoutGloo) {
  const char* json =
      R"({"distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 5, "tid": 5, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::broadcast_", "pid": 5, "tid": 5, "ts": 10, "dur": 20},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 5, "ts": 11, "dur": 18, "args": {"Collective name": "broadcast", "In msg nelems": 4, "Process Group Name": "0", "Seq": 9}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:broadcast", "pid": 5, "tid": 5, "ts": 12, "dur": 10},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 5, "ts": 40, "dur": 1, "args": {"Collective name": "wait"}}
  ]})";
  const trace::RankTrace t = ParseOk(json, "t.json");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.names[t.name[0]], "c10d::broadcast_");
  EXPECT_EQ(t.launch_ns[0], 10000);
  const trace::CommOp& op = t.comms[static_cast<size_t>(t.comm[0])];
  EXPECT_EQ(op.kind, OpType::kBroadcast);
  EXPECT_EQ(op.seq, 9);
  EXPECT_EQ(op.in_nelems, 4);
  EXPECT_EQ(t.groups[static_cast<size_t>(op.group)].name, "0");
  EXPECT_TRUE(HasWarning(t, "1 CPU comm ops of no known collective"));
}

// Pipeline sends and receives: SendRecv kernels typed by their CPU op, the
// peer from PyTorch's "Dst Rank" / "Src Rank"; a rank list truncated as
// PyTorch truncates long ones leaves the ranks to pg_config.
TEST(KinetoParserTest, SendRecvPeersAndTruncatedRankLists) {
  const char* json = R"js({"distributedInfo": {"rank": 1, "world_size": 40,
    "pg_config": [{"pg_name": "7", "pg_desc": "PIPELINE", "ranks": [1, 2, 3]}]},
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10, "dur": 10, "args": {"Collective name": "send", "Dst Rank": 2, "Process Group Name": "7", "Process Group Ranks": "[1, 2, ...]", "Seq": 0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(a)", "pid": 0, "tid": 21, "ts": 20, "dur": 5, "args": {"stream": 21, "correlation": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 30, "dur": 10, "args": {"Collective name": "recv", "Src Rank": 3, "Process Group Name": "7", "Seq": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 32, "dur": 2, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(b)", "pid": 0, "tid": 21, "ts": 40, "dur": 5, "args": {"stream": 21, "correlation": 2}}
  ]})js";
  const trace::RankTrace t = ParseOk(json, "t.json");
  ASSERT_EQ(t.comms.size(), 2u);
  const trace::CommOp& send =
      t.comms[static_cast<size_t>(t.comm[Row(t, "ncclDevKernel_SendRecv(a)")])];
  EXPECT_EQ(send.kind, OpType::kSend);
  EXPECT_EQ(send.peer, 2);
  EXPECT_EQ(send.seq, 0);
  const trace::CommOp& recv =
      t.comms[static_cast<size_t>(t.comm[Row(t, "ncclDevKernel_SendRecv(b)")])];
  EXPECT_EQ(recv.kind, OpType::kRecv);
  EXPECT_EQ(recv.peer, 3);
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(recv.group_size, 3);  // from the group's ranks
}

// record_shapes: "Input Dims" of CPU ops become element counts (-1 for an
// input without a shape), on the rank's clock (baseTimeNanoseconds added),
// with their op's name kept although no row uses it.
TEST(KinetoParserTest, InputDimsOfCpuOps) {
  const char* json = R"js({"baseTimeNanoseconds": 1000000,
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::embedding", "pid": 1, "tid": 1, "ts": 5, "dur": 10, "args": {"External id": 4, "Input Dims": [[50304, 768], [2, 384], [], [[1, 2], [3]]], "Input type": ["float", "long int", "Scalar", "TensorList"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20, "dur": 1, "args": {"Input Dims": [[4611686018427387904, 4]]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::zeros", "pid": 1, "tid": 1, "ts": 22, "dur": 1, "args": {"Input Dims": []}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 5, "args": {"stream": 7, "correlation": 1}}
  ]})js";
  const trace::RankTrace t = ParseOk(json, "rank0.json");
  ASSERT_EQ(t.input_shapes.size(), 3u);
  const trace::InputShape& e = t.input_shapes[0];
  EXPECT_EQ(t.names[e.name], "aten::embedding");
  EXPECT_EQ(e.start_ns, 5'000 + 1'000'000);
  ASSERT_EQ(e.count, 4u);
  EXPECT_EQ(std::vector<int64_t>(t.input_numels.begin() + e.first,
                                 t.input_numels.begin() + e.first + e.count),
            (std::vector<int64_t>{50304 * 768, 768, -1, -1}));
  EXPECT_EQ(t.input_numels[t.input_shapes[1].first], int64_t{1} << 62);
  EXPECT_EQ(t.input_shapes[2].count, 0u);
  EXPECT_EQ(t.names[t.name[0]], "gemm");
}

// Integers in args in every form the reader takes (a string of digits, an
// integral double, whitespace around) and the forms it does not (a
// fraction, a leading zero): plain integers take a fast path that must
// agree with simdjson's parser.
TEST(KinetoParserTest, IntegersInArgsInEveryForm) {
  const char* json = R"js({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20, "dur": 1, "args": {"Input Dims": [[7], ["8"], [9.0], [10.5], [1e1], [-0], [07], [ 12 ]
  , [123456789012345678], [1234567890123456789], [-5], [12345678901234567890], ["-3"]]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 5, "args": {"stream": 7 , "correlation":1}}
  ]})js";
  const trace::RankTrace t = ParseOk(json, "rank0.json");
  ASSERT_EQ(t.input_shapes.size(), 1u);
  const trace::InputShape& e = t.input_shapes[0];
  EXPECT_EQ(std::vector<int64_t>(t.input_numels.begin() + e.first,
                                 t.input_numels.begin() + e.first + e.count),
            (std::vector<int64_t>{7, 8, 9, -1, 10, 0, -1, 12,
                                  123456789012345678, 1234567890123456789, -1,
                                  -1, -1}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.stream[0], 7);
  EXPECT_EQ(t.launch_ns[0], 6000);
}

// The CPU op that launched each kernel (RankTrace::launch_op): kernels
// first in the file; on thread 10 aten::linear holds aten::addmm (zero-
// length aten::view inside it), a launch in each and one after both;
// thread 11's op holds a launch at a time thread 10's ops also cover;
// thread 12 has no op; a launch where an op starts, and one where an op
// ends (both held); record_param_comms around an NCCL launch.
const char* const kLaunchOpsTrace = R"js({"traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 200, "dur": 5, "args": {"stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "bias", "pid": 0, "tid": 7, "ts": 210, "dur": 5, "args": {"stream": 7, "correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "loose", "pid": 0, "tid": 7, "ts": 320, "dur": 5, "args": {"stream": 7, "correlation": 3}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "pid": 0, "tid": 8, "ts": 220, "dur": 5, "args": {"stream": 8, "correlation": 4}},
  {"ph": "X", "cat": "kernel", "name": "other thread", "pid": 0, "tid": 7, "ts": 230, "dur": 5, "args": {"stream": 7, "correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "at start", "pid": 0, "tid": 7, "ts": 420, "dur": 5, "args": {"stream": 7, "correlation": 6}},
  {"ph": "X", "cat": "kernel", "name": "at end", "pid": 0, "tid": 7, "ts": 520, "dur": 5, "args": {"stream": 7, "correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 20, "ts": 620, "dur": 5, "args": {"stream": 20, "correlation": 8}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 10, "ts": 0, "dur": 1000},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 10, "ts": 100, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 10, "ts": 110, "dur": 40},
  {"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 10, "ts": 115, "dur": 0},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 120, "dur": 5, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 160, "dur": 5, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 300, "dur": 5, "args": {"correlation": 3}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 11, "ts": 121, "dur": 50},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 11, "ts": 125, "dur": 5, "args": {"correlation": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 12, "ts": 125, "dur": 5, "args": {"correlation": 5}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 10, "ts": 400, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 400, "dur": 5, "args": {"correlation": 6}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 10, "ts": 500, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 510, "dur": 5, "args": {"correlation": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 10, "ts": 600, "dur": 20, "args": {"Collective name": "allreduce", "Group size": 2, "Process Group Name": "0"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 605, "dur": 5, "args": {"correlation": 8}}
]})js";

TEST(KinetoParserTest, LaunchOpIsTheInnermostCpuOpAroundTheLaunch) {
  const trace::RankTrace t = ParseOk(kLaunchOpsTrace, "rank0.json");
  ASSERT_EQ(t.size(), 8u);
  ASSERT_EQ(t.launch_op.size(), t.size());
  const auto op_of = [&](std::string_view kernel) -> std::string {
    const uint32_t op = t.LaunchOp(Row(t, kernel));
    return op == trace::RankTrace::kNoLaunchOp ? "(none)" : t.names[op];
  };
  EXPECT_EQ(op_of("gemm"), "aten::addmm");  // not the zero-length view
  EXPECT_EQ(op_of("bias"), "aten::linear");
  EXPECT_EQ(op_of("loose"), "(none)");
  EXPECT_EQ(op_of("Memcpy DtoD"), "aten::copy_");
  EXPECT_EQ(op_of("other thread"), "(none)");
  EXPECT_EQ(op_of("at start"), "aten::add");
  EXPECT_EQ(op_of("at end"), "aten::mul");
  EXPECT_EQ(op_of("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"),
            "record_param_comms");
  // Only the names rows use are kept.
  EXPECT_EQ(std::count(t.names.begin(), t.names.end(), "aten::view"), 0);
}

TEST(KinetoParserTest, NoLaunchOpColumnWithoutCpuOps) {
  const char* json = R"js({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 5, "args": {"stream": 7, "correlation": 1}}
  ]})js";
  const trace::RankTrace t = ParseOk(json, "rank0.json");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t.launch_op.empty());
  EXPECT_EQ(t.LaunchOp(0), trace::RankTrace::kNoLaunchOp);
  const trace::RankTrace cpu = ParseOk(R"js({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 10}
  ]})js", "rank0.json");
  EXPECT_TRUE(cpu.cpu_only);
  EXPECT_TRUE(cpu.launch_op.empty());  // its rows are the CPU ops
}

// Two profiling cycles merged: the launching ops follow their names, and a
// cycle without the column gets none.
TEST(KinetoParserTest, MergedCyclesKeepTheirLaunchOps) {
  trace::RankTrace into = ParseOk(R"js({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 5, "args": {"stream": 7, "correlation": 1}}
  ]})js", "rank0.json");
  trace::RankTrace from = ParseOk(kLaunchOpsTrace, "rank0.json");
  ASSERT_TRUE(into.launch_op.empty());
  const size_t rows = into.size();
  const std::string gemm_op = from.names[from.LaunchOp(Row(from, "gemm"))];
  ASSERT_TRUE(trace::MergeRankTraces(std::move(from), &into));
  ASSERT_EQ(into.launch_op.size(), into.size());
  EXPECT_EQ(into.LaunchOp(0), trace::RankTrace::kNoLaunchOp);
  size_t gemm = rows;
  while (gemm < into.size() && into.names[into.name[gemm]] != "gemm") ++gemm;
  ASSERT_LT(gemm, into.size());
  EXPECT_EQ(into.names[into.LaunchOp(gemm)], gemm_op);
  EXPECT_EQ(gemm_op, "aten::addmm");
}

TEST(KinetoParserTest, SyntheticTraceCounts) {
  kineto::SyntheticTraceSpec spec;
  kineto::SyntheticTraceCounts counts;
  const std::string json = kineto::SyntheticKinetoTrace(spec, &counts);
  const trace::RankTrace t = ParseOk(json, "x.json");
  EXPECT_EQ(t.events, counts.events);
  EXPECT_EQ(static_cast<int64_t>(t.size()), counts.gpu_ops);
  EXPECT_EQ(static_cast<int64_t>(t.comms.size()), counts.collectives);
  EXPECT_EQ(t.steps.size(), static_cast<size_t>(spec.steps));
  EXPECT_EQ(t.rank, spec.rank);
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
  for (size_t i = 0; i < t.size(); ++i) EXPECT_GE(t.launch_ns[i], 0);
  // Each kernel's launch sits in its cpu_op; a collective's innermost is
  // record_param_comms (nccl:* is a user annotation).
  ASSERT_EQ(t.launch_op.size(), t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    ASSERT_NE(t.launch_op[i], trace::RankTrace::kNoLaunchOp);
    const std::string& op = t.names[t.launch_op[i]];
    EXPECT_EQ(op == "record_param_comms", t.comm[i] >= 0) << op;
    if (t.names[t.name[i]] == "ampere_sgemm_128x64_tn") {
      EXPECT_EQ(op, "aten::addmm");
    }
  }
  for (const trace::CommOp& op : t.comms) {
    EXPECT_EQ(op.kind, OpType::kAllReduce);
    EXPECT_EQ(op.group_size, spec.world_size);
  }
}

// Any cut, any batch size: the same RankTrace, or the same error.
TEST(KinetoParserTest, PiecesCutAnywhereGiveTheSameResult) {
  kineto::SyntheticTraceSpec spec;
  spec.steps = 1;
  spec.kernels_per_step = 3;
  spec.kernels_per_collective = 2;
  std::vector<std::string> texts = {
      kGpuTrace, kineto::SyntheticKinetoTrace(spec), kLaunchOpsTrace};
  texts.push_back(texts[0].substr(0, texts[0].size() / 2));  // truncated
  std::string bad_event = texts[0];
  bad_event.replace(bad_event.find("\"dur\": 20,"), 10, "\"dur\": 20,,");
  texts.push_back(bad_event);
  std::mt19937 random(3);
  for (const std::string& text : texts) {
    const Result<trace::RankTrace> whole = ParseKinetoTrace(text, "p.json");
    const auto same = [&](const Result<trace::RankTrace>& other,
                          const std::string& how) {
      ASSERT_EQ(other.ok(), whole.ok()) << how;
      if (!whole.ok()) {
        EXPECT_EQ(other.status().message(), whole.status().message()) << how;
      } else {
        EXPECT_EQ(RankTraceDifference(*other, *whole), "") << how;
      }
    };
    for (size_t cut = 0; cut <= text.size(); cut += 1 + cut % 7) {
      KinetoParser parser("p.json");
      Status s = parser.Feed(std::string_view(text).substr(0, cut));
      if (s.ok()) s = parser.Feed(std::string_view(text).substr(cut));
      same(s.ok() ? parser.Finish() : Result<trace::RankTrace>(s),
           "cut " + std::to_string(cut));
    }
    for (size_t batch : {size_t{1}, size_t{100}, size_t{4096}}) {
      KinetoOptions options;
      options.batch_bytes = batch;
      KinetoParser parser("p.json", options);
      Status s;
      for (size_t at = 0; at < text.size() && s.ok();) {
        const size_t n = 1 + random() % 50;
        s = parser.Feed(std::string_view(text).substr(at, n));
        at += n;
      }
      same(s.ok() ? parser.Finish() : Result<trace::RankTrace>(s),
           "batch " + std::to_string(batch));
    }
  }
}

TEST(KinetoParserTest, ErrorsNameTheFileAndTheByte) {
  EXPECT_EQ(ErrorOf("hello"),
            "t.json: byte 0: not JSON: expected '{' or '[' but found 'h'");
  EXPECT_EQ(ErrorOf(R"({"schemaVersion": 1})"),
            "t.json: no traceEvents: not a Chrome / Kineto trace");
  const std::string bad =
      R"({"traceEvents": [{"ph": "X"}, {"ph": "X", "ts": 1,}]})";
  const std::string error = ErrorOf(bad);
  EXPECT_EQ(error.rfind("t.json: byte 30: invalid JSON in an event: ", 0), 0u)
      << error;
  const std::string bad_info =
      R"({"distributedInfo": {"rank": }, "traceEvents": []})";
  EXPECT_EQ(ErrorOf(bad_info).rfind(
                "t.json: byte 20: invalid JSON in distributedInfo: ", 0),
            0u)
      << ErrorOf(bad_info);
  // Every prefix of a trace fails cleanly.
  const std::string text = kGpuTrace;
  for (size_t size = 0; size + 1 < text.size(); size += 3) {
    EXPECT_NE(ErrorOf(text.substr(0, size)), "") << size;
  }
}

TEST(KinetoParserTest, FeedAfterErrorKeepsTheError) {
  KinetoParser parser("t.json");
  const Status first = parser.Feed("nope");
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(parser.Feed("{}").message(), first.message());
  EXPECT_EQ(parser.Finish().status().message(), first.message());
}

}  // namespace
}  // namespace strag::ingest
