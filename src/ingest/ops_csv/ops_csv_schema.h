// SPDX-License-Identifier: Apache-2.0
// The columns of the ops CSV and its time unit, shared by the reader and the
// writer so that both always agree (docs/formats/ops-csv.md).

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_SCHEMA_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_SCHEMA_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace strag::ingest::ops_csv {

// What a known column fills in trace::OpsTable.
enum class Column : uint8_t {
  kDp,           // dp_rank    -> dp
  kPp,           // stage      -> pp
  kRank,         // rank       -> rank
  kStep,         // step       -> step
  kOpType,       // optype     -> op_type
  kStart,        // start_ts   -> start_ns, start_s32 (seconds in the CSV)
  kDur,          // duration   -> dur_ns, dur_s32 (seconds in the CSV)
  kSeqId,        // seq_id     -> seq_id
  kChunk,        // mc         -> chunk (-1 when absent or empty)
  kMicrobatch,   // mb_id      -> microbatch (-1 when absent or empty)
  kGlobalChunk,  // gmc        -> global_chunk (-1 when absent or empty)
  kTp,           // tp_rank    -> tp (optional)
  kCp,           // cp_rank    -> cp (optional)
  kTokens,       // tokens     -> tokens (optional)
};
inline constexpr int kNumColumns = 14;
// The first kNumRequiredColumns entries of kColumnNames must be present.
inline constexpr int kNumRequiredColumns = 8;

// Indexed by Column; also the order in which the writer emits them.
inline constexpr std::array<std::string_view, kNumColumns> kColumnNames = {
    "dp_rank", "stage", "rank",  "step", "optype",  "start_ts", "duration",
    "seq_id",  "mc",    "mb_id", "gmc",  "tp_rank", "cp_rank",  "tokens",
};

inline std::string_view ColumnName(Column column) {
  return kColumnNames[static_cast<size_t>(column)];
}

// Times beyond this many seconds (~292 years) do not fit in int64 ns.
inline constexpr double kMaxAbsSeconds = 9.2e9;

// The one conversion from CSV seconds to table nanoseconds: exactly
// std::llround(seconds * 1e9) (round half away from zero), inlined because
// the reader calls it twice per row. The writer relies on it to check that
// its text reads back. Requires |seconds| <= kMaxAbsSeconds.
inline int64_t SecondsToNs(double seconds) {
  const double scaled = seconds * 1e9;
  const auto truncated = static_cast<int64_t>(scaled);
  // Exact: the fractional part of a double is representable.
  const double fraction = scaled - static_cast<double>(truncated);
  // Without branches: a fraction past one half is as likely as not, and a
  // mispredicted branch per duration cost more than the comparisons.
  return truncated + static_cast<int64_t>(fraction >= 0.5) -
         static_cast<int64_t>(fraction <= -0.5);
}

}  // namespace strag::ingest::ops_csv

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_SCHEMA_H_
