// SPDX-License-Identifier: Apache-2.0
#include "trace/rank_trace_pack.h"

#include <gtest/gtest.h>

#include <string>

namespace strag::trace {
namespace {

// A trace with every field set to something other than its default.
RankTrace Full() {
  RankTrace t;
  t.source = "rank3.json.gz";
  t.rank = 3;
  t.world_size = 8;
  t.backend = "nccl";
  t.absolute_clock = true;
  t.cpu_only = false;
  t.groups = {{.name = "0", .desc = "default_pg", .ranks = {0, 1, 2, 3}},
              {.name = "5", .desc = "", .ranks = {}}};
  t.steps = {{.id = 7, .start_ns = 100, .end_ns = 900},
             {.id = 8, .start_ns = 950, .end_ns = -1}};
  t.start_ns = {10, 20, 30};
  t.dur_ns = {1, 2, 3};
  t.launch_ns = {-1, 15, 25};
  t.stream = {7, 7, 13};
  t.comm = {-1, 0, 1};
  t.name = {0, 1, 1};
  t.launch_op = {RankTrace::kNoLaunchOp, 2, 2};
  t.names = {"sgemm", "ncclKernel_AllReduce", "aten::mm", ""};
  t.comms = {{.kind = OpType::kAllReduce,
              .group = 0,
              .seq = 4,
              .in_nelems = 1 << 20,
              .out_nelems = 1 << 20,
              .group_size = 4,
              .peer = -1,
              .async_post = false},
             {.kind = OpType::kSend,
              .group = 1,
              .seq = -1,
              .in_nelems = 5,
              .out_nelems = -1,
              .group_size = 0,
              .peer = 2,
              .async_post = true}};
  t.host_spans = {{.kind = HostKind::kGc, .start_ns = 5, .end_ns = 9},
                  {.kind = HostKind::kDataLoading, .start_ns = 0, .end_ns = 4}};
  t.input_shapes = {{.start_ns = 11, .name = 2, .first = 0, .count = 2}};
  t.input_numels = {4096, -1};
  t.events = 12345;
  t.skipped = {{"unknown category 'foo'", 12}, {"instant events", 3}};
  t.warnings = {"no distributedInfo", "a,\"quoted\"\nline"};
  return t;
}

void ExpectSame(const RankTrace& a, const RankTrace& b) {
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.absolute_clock, b.absolute_clock);
  EXPECT_EQ(a.cpu_only, b.cpu_only);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t k = 0; k < a.groups.size(); ++k) {
    EXPECT_EQ(a.groups[k].name, b.groups[k].name);
    EXPECT_EQ(a.groups[k].desc, b.groups[k].desc);
    EXPECT_EQ(a.groups[k].ranks, b.groups[k].ranks);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t k = 0; k < a.steps.size(); ++k) {
    EXPECT_EQ(a.steps[k].id, b.steps[k].id);
    EXPECT_EQ(a.steps[k].start_ns, b.steps[k].start_ns);
    EXPECT_EQ(a.steps[k].end_ns, b.steps[k].end_ns);
  }
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.dur_ns, b.dur_ns);
  EXPECT_EQ(a.launch_ns, b.launch_ns);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.comm, b.comm);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.launch_op, b.launch_op);
  EXPECT_EQ(a.names, b.names);
  ASSERT_EQ(a.comms.size(), b.comms.size());
  for (size_t k = 0; k < a.comms.size(); ++k) {
    const CommOp &x = a.comms[k], &y = b.comms[k];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.seq, y.seq);
    EXPECT_EQ(x.in_nelems, y.in_nelems);
    EXPECT_EQ(x.out_nelems, y.out_nelems);
    EXPECT_EQ(x.group_size, y.group_size);
    EXPECT_EQ(x.peer, y.peer);
    EXPECT_EQ(x.async_post, y.async_post);
  }
  ASSERT_EQ(a.host_spans.size(), b.host_spans.size());
  for (size_t k = 0; k < a.host_spans.size(); ++k) {
    EXPECT_EQ(a.host_spans[k].kind, b.host_spans[k].kind);
    EXPECT_EQ(a.host_spans[k].start_ns, b.host_spans[k].start_ns);
    EXPECT_EQ(a.host_spans[k].end_ns, b.host_spans[k].end_ns);
  }
  ASSERT_EQ(a.input_shapes.size(), b.input_shapes.size());
  for (size_t k = 0; k < a.input_shapes.size(); ++k) {
    EXPECT_EQ(a.input_shapes[k].start_ns, b.input_shapes[k].start_ns);
    EXPECT_EQ(a.input_shapes[k].name, b.input_shapes[k].name);
    EXPECT_EQ(a.input_shapes[k].first, b.input_shapes[k].first);
    EXPECT_EQ(a.input_shapes[k].count, b.input_shapes[k].count);
  }
  EXPECT_EQ(a.input_numels, b.input_numels);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.skipped, b.skipped);
  EXPECT_EQ(a.warnings, b.warnings);
}

TEST(RankTracePackTest, EveryFieldComesBack) {
  for (const RankTrace& t : {Full(), RankTrace{}}) {
    BytePacker out;
    PackRankTrace(t, &out);
    PackRankTrace(t, &out);  // two in a row read back one after the other
    const std::string bytes = out.Take();
    ByteUnpacker in(bytes);
    for (int copy = 0; copy < 2; ++copy) {
      Result<RankTrace> back = UnpackRankTrace(&in);
      ASSERT_TRUE(back.ok()) << back.status().message();
      ExpectSame(t, *back);
    }
    EXPECT_TRUE(in.done());
  }
}

TEST(RankTracePackTest, TruncatedOrUnevenBytesAreRefused) {
  BytePacker out;
  PackRankTrace(Full(), &out);
  const std::string bytes = out.Take();
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    ByteUnpacker in(std::string_view(bytes).substr(0, cut));
    EXPECT_FALSE(UnpackRankTrace(&in).ok()) << cut;
  }
  // Columns of different lengths: one more start than durations.
  RankTrace uneven = Full();
  uneven.start_ns.push_back(40);
  BytePacker packed;
  PackRankTrace(uneven, &packed);
  const std::string uneven_bytes = packed.Take();
  ByteUnpacker in(uneven_bytes);
  const Result<RankTrace> back = UnpackRankTrace(&in);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("different lengths"),
            std::string::npos);
}

}  // namespace
}  // namespace strag::trace
