// SPDX-License-Identifier: Apache-2.0
#include "trace/ops_table_pack.h"

#include <gtest/gtest.h>

#include <string>

namespace strag::trace {
namespace {

OpsTable TwoRows() {
  OpsTable t;
  t.rank = {0, 5};
  t.dp = {0, 1};
  t.pp = {0, 1};
  t.step = {-3, 7};
  t.op_type = {OpType::kForwardCompute, OpType::kGradsReduceScatter};
  t.seq_id = {0, 2};
  t.chunk = {-1, 0};
  t.microbatch = {-1, 4};
  t.global_chunk = {-1, 1};
  t.start_ns = {1, 2'000'000'000'000};
  t.dur_ns = {3, 4};
  t.start_s32 = {0.5f, 2000.0f};
  t.dur_s32 = {1e-9f, 4e-9f};
  t.start_rem_as = {-7, 9};
  t.tokens = {4096, 2048};  // tp and cp absent
  t.extra.emplace_back("seq_lens", std::vector<std::string>{"2048;2048", ""});
  t.extra.emplace_back("note", std::vector<std::string>{"a,\"b\"", "\n"});
  return t;
}

void ExpectSame(const OpsTable& a, const OpsTable& b) {
  OpsTable::ForEachColumn(
      a, b, [](const auto& x, const auto& y) { EXPECT_EQ(x, y); });
  ASSERT_EQ(a.extra.size(), b.extra.size());
  for (size_t e = 0; e < a.extra.size(); ++e) {
    EXPECT_EQ(a.extra[e].name, b.extra[e].name);
    EXPECT_EQ(a.extra[e].Values(), b.extra[e].Values());
  }
}

TEST(OpsTablePackTest, RoundTripsEveryColumn) {
  const OpsTable t = TwoRows();
  BytePacker out;
  PackOpsTable(t, &out);
  PackOpsTable(OpsTable(), &out);  // an empty one after it
  const std::string bytes = out.Take();
  ByteUnpacker in(bytes);
  Result<OpsTable> back = UnpackOpsTable(&in);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ExpectSame(t, *back);
  EXPECT_TRUE(back->tp.empty());
  Result<OpsTable> empty = UnpackOpsTable(&in);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_TRUE(in.done());
}

TEST(OpsTablePackTest, DamagedBytesAreRefused) {
  BytePacker out;
  PackOpsTable(TwoRows(), &out);
  const std::string bytes = out.Take();
  for (size_t cut :
       {size_t{0}, size_t{9}, bytes.size() / 2, bytes.size() - 1}) {
    ByteUnpacker in(std::string_view(bytes).substr(0, cut));
    EXPECT_FALSE(UnpackOpsTable(&in).ok()) << cut;
  }
  OpsTable uneven = TwoRows();
  uneven.dur_ns.pop_back();
  BytePacker bad;
  PackOpsTable(uneven, &bad);
  const std::string bad_bytes = bad.Take();
  ByteUnpacker in(bad_bytes);
  EXPECT_FALSE(UnpackOpsTable(&in).ok());
}

}  // namespace
}  // namespace strag::trace
