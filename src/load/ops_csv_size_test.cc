// SPDX-License-Identifier: Apache-2.0
#include "load/ops_csv_size.h"

#include <gtest/gtest.h>

namespace strag::load {
namespace {

// Held windows pay from ~4M ops with one extra column (the simulator's
// `seq_lens`), from ~8M without; never for a job of a few windows.
TEST(OpsCsvSizeTest, HeldWindowsTakeLessFromAFewMillionOps) {
  const auto held = [](uint64_t rows, uint64_t extra) {
    return OpsCsvSize{.rows = rows, .extra_columns = extra}
        .HeldWindowsTakeLess();
  };
  EXPECT_FALSE(held(1'000'000, 1));
  EXPECT_FALSE(held(3'500'000, 1));
  EXPECT_TRUE(held(4'800'000, 1));
  EXPECT_FALSE(held(4'800'000, 0));
  EXPECT_FALSE(held(7'500'000, 0));  // trace-AR x64: read whole, 262 MB
  EXPECT_TRUE(held(8'600'000, 0));
  EXPECT_TRUE(held(100'000'000, 0));
  EXPECT_TRUE(held(2'000'000, 12));
}

}  // namespace
}  // namespace strag::load
