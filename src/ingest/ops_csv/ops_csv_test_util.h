// SPDX-License-Identifier: Apache-2.0
// Test helpers shared by the ops CSV tests: table and outcome comparison.

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_TEST_UTIL_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "trace/ops_table.h"

namespace strag::ingest {

// Byte order mark, CRLF and LF line ends, blank lines, quoted fields with a
// comma, a CRLF line break and doubled quotes, quoted numbers and op types,
// empty mc / mb_id / gmc, and no final newline.
inline constexpr std::string_view kTrickyCsv =
    "\xEF\xBB\xBF"
    "rank,dp_rank,stage,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc,"
    "name\r\n"
    "0,0,0,16,forward-compute,0.5,0.25,0,0,1,0,\"fwd, mb 1\"\r\n"
    "\r\n"
    "1,0,1,16,backward-compute,1.25,0.125,1,0,1,1,\"two\r\nlines \"\"q\"\"\"\n"
    "\n"
    "2,1,0,17,gc,2.6883304119110107,1e-05,2,,,,plain\n"
    "3,1,1,17,optimizer,3,0.5,0,-1,-1,-1,\"\"\r\n"
    "4,1,1,17,\"gc\",\"4.5\",0,\"7\",-1,-1,-1,last";

// Success when every column of `a` equals that of `b`; names the first
// column that differs.
inline ::testing::AssertionResult SameTable(const trace::OpsTable& a,
                                            const trace::OpsTable& b) {
#define STRAG_COMPARE_COLUMN_(column)                                     \
  if (a.column != b.column) {                                             \
    return ::testing::AssertionFailure() << "column " #column " differs"; \
  }
  STRAG_COMPARE_COLUMN_(rank)
  STRAG_COMPARE_COLUMN_(dp)
  STRAG_COMPARE_COLUMN_(pp)
  STRAG_COMPARE_COLUMN_(step)
  STRAG_COMPARE_COLUMN_(op_type)
  STRAG_COMPARE_COLUMN_(seq_id)
  STRAG_COMPARE_COLUMN_(chunk)
  STRAG_COMPARE_COLUMN_(microbatch)
  STRAG_COMPARE_COLUMN_(global_chunk)
  STRAG_COMPARE_COLUMN_(start_ns)
  STRAG_COMPARE_COLUMN_(dur_ns)
  STRAG_COMPARE_COLUMN_(start_s32)
  STRAG_COMPARE_COLUMN_(dur_s32)
  STRAG_COMPARE_COLUMN_(start_rem_as)
  STRAG_COMPARE_COLUMN_(tp)
  STRAG_COMPARE_COLUMN_(cp)
  STRAG_COMPARE_COLUMN_(tokens)
#undef STRAG_COMPARE_COLUMN_
  if (a.extra.size() != b.extra.size()) {
    return ::testing::AssertionFailure() << "extra column counts differ";
  }
  for (size_t i = 0; i < a.extra.size(); ++i) {
    if (a.extra[i] != b.extra[i]) {
      return ::testing::AssertionFailure()
             << "extra column " << i << " differs";
    }
  }
  return ::testing::AssertionSuccess();
}

// Success when both results hold equal tables, or fail with the same code
// and message.
inline ::testing::AssertionResult SameOutcome(
    const Result<trace::OpsTable>& actual,
    const Result<trace::OpsTable>& expected) {
  if (actual.ok() != expected.ok()) {
    return ::testing::AssertionFailure()
           << (actual.ok() ? "parsed, expected: " + expected.status().message()
                           : "failed: " + actual.status().message() +
                                 ", expected success");
  }
  if (actual.ok()) return SameTable(*actual, *expected);
  if (actual.status().code() != expected.status().code() ||
      actual.status().message() != expected.status().message()) {
    return ::testing::AssertionFailure()
           << "error '" << actual.status().message() << "', expected '"
           << expected.status().message() << "'";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_TEST_UTIL_H_
