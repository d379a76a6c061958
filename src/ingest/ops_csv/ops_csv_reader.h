// SPDX-License-Identifier: Apache-2.0
// Reader for the ops CSV, the interchange format of strag
// (docs/formats/ops-csv.md): one row per traced op, times in seconds.

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_READER_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_READER_H_

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "ingest/common/input_limits.h"
#include "trace/ops_table.h"

namespace strag::ingest {

using ::strag::Result;

// Parses the ops CSV text `csv` (already gunzipped; see MaybeGunzip).
//
// The header names the columns, in any order. Required: dp_rank, stage,
// rank, step, optype, start_ts, duration, seq_id. Known optional columns:
// mc, mb_id, gmc (-1 when absent), tp_rank, cp_rank, tokens (left empty in
// the table when absent). Any other column is kept verbatim in
// `OpsTable::extra`. Each time is parsed exactly to a double `d` (seconds)
// and stored both as `(float)d` in the s32 columns and as `llround(d * 1e9)`
// in the ns columns.
//
// Bad input gives kInvalidInput with one message naming `source_name`, the
// 1-based line (the header is line 1) and the column, e.g.
//   trace.csv: line 12: column 'duration': -0.5 is negative
// A line longer than `max_line_bytes` (its line break included), a NUL
// byte in the header line or a header of more than 256 fields is refused
// (see OpsCsvParser). Single pass, O(size of `csv`); allocates per row only
// for extra columns.
Result<trace::OpsTable> ParseOpsCsv(
    std::string_view csv, std::string_view source_name,
    uint64_t max_line_bytes = kDefaultMaxLineBytes);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_READER_H_
