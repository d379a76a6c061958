// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/comm_nests.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/kineto_test_util.h"

namespace strag::ingest::kineto {
namespace {

// The definitions, walked the slow way (as the reader did before issue 11).
int64_t InnermostByWalk(const CommNests& nests, const ThreadPoint& p) {
  const std::vector<CpuCommOp>& ops = nests.ops();
  int64_t i = -1;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].thread == p.thread && ops[k].ts <= p.t) {
      i = static_cast<int64_t>(k);
    }
  }
  while (i >= 0 && ops[static_cast<size_t>(i)].end < p.t) {
    i = nests.parent(static_cast<size_t>(i));
  }
  return i;
}

CommDetails MergedByWalk(const CommNests& nests, size_t i) {
  CommDetails details = nests.ops()[i].details;
  for (int64_t p = nests.parent(i); p >= 0;
       p = nests.parent(static_cast<size_t>(p))) {
    details.Fill(nests.ops()[static_cast<size_t>(p)].details);
  }
  return details;
}

CommDetails NestDetailsBySort(const CommNests& nests, size_t root) {
  const auto depth = [&](size_t i) {
    int d = 0;
    for (int64_t p = nests.parent(i); p >= 0;
         p = nests.parent(static_cast<size_t>(p))) {
      ++d;
    }
    return d;
  };
  std::vector<size_t> members;
  for (size_t i = 0; i < nests.ops().size(); ++i) {
    if (nests.root(i) == root) members.push_back(i);
  }
  std::stable_sort(members.begin(), members.end(),
                   [&](size_t a, size_t b) { return depth(a) > depth(b); });
  CommDetails details;
  for (size_t m : members) details.Fill(nests.ops()[m].details);
  return details;
}

bool Same(const CommDetails& a, const CommDetails& b) {
  return a.has_kind == b.has_kind && (!a.has_kind || a.kind == b.kind) &&
         a.group == b.group && a.seq == b.seq && a.in_nelems == b.in_nelems &&
         a.out_nelems == b.out_nelems && a.group_size == b.group_size &&
         a.dst_rank == b.dst_rank && a.src_rank == b.src_rank;
}

// Random ops with many ties (same start, same end, touching ends), gloo ops
// among them, and details that know some fields each.
std::vector<CpuCommOp> RandomOps(std::mt19937_64* random, size_t n) {
  std::vector<CpuCommOp> ops;
  for (size_t i = 0; i < n; ++i) {
    CpuCommOp op;
    op.thread = {1, static_cast<int64_t>((*random)() % 3)};
    op.ts = static_cast<int64_t>((*random)() % 40);
    op.end = op.ts + static_cast<int64_t>((*random)() % 25);
    op.family = (*random)() % 5 == 0 ? CpuCommFamily::kGloo
                                     : CpuCommFamily::kRecordParamComms;
    if ((*random)() % 3 == 0) {
      op.details.has_kind = true;
      op.details.kind = (*random)() % 2 ? trace::OpType::kAllReduce
                                        : trace::OpType::kAllGather;
    }
    if ((*random)() % 2 == 0) {
      op.details.seq = static_cast<int64_t>((*random)() % 100);
    }
    if ((*random)() % 4 == 0) {
      op.details.group = static_cast<int32_t>((*random)() % 5);
    }
    ops.push_back(op);
  }
  return ops;
}

TEST(CommNestsTest, SameAsWalkingTheNests) {
  std::mt19937_64 random(11);
  for (int round = 0; round < 300; ++round) {
    const CommNests nests(RandomOps(&random, 1 + random() % 30));
    std::vector<ThreadPoint> points;
    for (int q = 0; q < 40; ++q) {
      points.push_back({{1, static_cast<int64_t>(random() % 4)},
                        static_cast<int64_t>(random() % 70) - 3});
    }
    const std::vector<int64_t> innermost = nests.InnermostOf(points);
    ASSERT_EQ(innermost.size(), points.size());
    for (size_t q = 0; q < points.size(); ++q) {
      ASSERT_EQ(innermost[q], InnermostByWalk(nests, points[q]))
          << "round " << round << ", point " << q;
    }
    for (size_t i = 0; i < nests.ops().size(); ++i) {
      ASSERT_TRUE(Same(nests.Merged(i), MergedByWalk(nests, i)));
      if (nests.root(i) == i) {
        ASSERT_TRUE(Same(nests.NestDetails(i), NestDetailsBySort(nests, i)));
      }
    }
  }
}

// The plain CPU ops' sweep (a kernel's launching op) answers as the comm
// nests do on the same ops (no gloo op: every cpu_op may contain others).
TEST(CommNestsTest, InnermostCpuOpsAsTheNests) {
  std::mt19937_64 random(13);
  for (int round = 0; round < 300; ++round) {
    std::vector<CpuCommOp> ops = RandomOps(&random, 1 + random() % 30);
    std::vector<CpuOpSpan> spans;
    for (size_t i = 0; i < ops.size(); ++i) {
      ops[i].family = CpuCommFamily::kRecordParamComms;
      ops[i].name = static_cast<uint32_t>(i);
      spans.push_back({ops[i].ts, ops[i].end,
                       static_cast<uint32_t>(ops[i].thread.tid), ops[i].name});
    }
    const CommNests nests(std::move(ops));
    std::vector<ThreadPoint> points;
    for (int q = 0; q < 40; ++q) {
      points.push_back({{1, static_cast<int64_t>(random() % 4)},
                        static_cast<int64_t>(random() % 70) - 3});
    }
    std::vector<CpuOpPoint> cpu_points;  // thread index = tid
    for (const ThreadPoint& p : points) {
      cpu_points.push_back({static_cast<uint32_t>(p.thread.tid), p.t});
    }
    const std::vector<int64_t> expected = nests.InnermostOf(points);
    const std::vector<int64_t> innermost = InnermostCpuOps(&spans, cpu_points);
    ASSERT_EQ(innermost.size(), points.size());
    for (size_t q = 0; q < points.size(); ++q) {
      ASSERT_EQ(innermost[q] < 0, expected[q] < 0) << "round " << round;
      if (expected[q] < 0) continue;
      ASSERT_EQ(spans[static_cast<size_t>(innermost[q])].name,
                nests.ops()[static_cast<size_t>(expected[q])].name)
          << "round " << round << ", point " << q;
    }
  }
}

// 200k ops nested 200k deep and a query at each one's start and end: with
// a walk up the nest per query or a sort of the nest per kernel this is
// ~10^10 steps; here it is a few hundred milliseconds at most (no timing
// is asserted: ctest's timeout is the guard).
TEST(CommNestsTest, DeepNestsAreLinearithmic) {
  constexpr int64_t kDepth = 200'000;
  std::vector<CpuCommOp> ops;
  std::vector<ThreadPoint> points;
  for (int64_t k = 0; k < kDepth; ++k) {
    CpuCommOp op;
    op.thread = {1, 1};
    op.ts = k + 1;
    op.end = 2 * kDepth - k + 1;
    op.family = CpuCommFamily::kRecordParamComms;
    op.details.seq = k;
    ops.push_back(op);
    points.push_back({op.thread, op.ts});
    points.push_back({op.thread, op.end});
  }
  const CommNests nests(std::move(ops));
  const std::vector<int64_t> innermost = nests.InnermostOf(points);
  for (int64_t k = 0; k < kDepth; ++k) {
    const auto i = static_cast<size_t>(k);
    ASSERT_EQ(innermost[2 * i], k);
    ASSERT_EQ(innermost[2 * i + 1], k);
    ASSERT_EQ(nests.Merged(i).seq, k);
    ASSERT_EQ(nests.root(i), 0u);
  }
  EXPECT_EQ(nests.NestDetails(0).seq, kDepth - 1);  // the deepest op first
}

// The whole reader on 100k nested record_param_comms ops, each launching a
// kernel (25k took 16 s before issue 11).
TEST(CommNestsTest, DeepNestTraceReadsEveryKernel) {
  constexpr int64_t kDepth = 100'000;
  const Result<trace::RankTrace> trace =
      ParseKinetoTrace(DeepCommNestTrace(kDepth), "nest.json");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->size(), static_cast<size_t>(kDepth));
  ASSERT_EQ(trace->comms.size(), static_cast<size_t>(kDepth));
  for (size_t row = 0; row < trace->size(); ++row) {
    const trace::CommOp& comm =
        trace->comms[static_cast<size_t>(trace->comm[row])];
    ASSERT_EQ(comm.kind, trace::OpType::kAllReduce);
    ASSERT_EQ(comm.seq, static_cast<int64_t>(row));  // its own op's Seq
  }
}

}  // namespace
}  // namespace strag::ingest::kineto
