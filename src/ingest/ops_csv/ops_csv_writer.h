// SPDX-License-Identifier: Apache-2.0
// Writer for the ops CSV (docs/formats/ops-csv.md); the inverse of
// ParseOpsCsv.

#ifndef STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_WRITER_H_
#define STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_WRITER_H_

#include <cstddef>
#include <string>

#include "trace/ops_table.h"

namespace strag::ingest {

// Renders `table` as ops CSV text: the header
//   dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc
// then tp_rank, cp_rank, tokens when the table has them, then the extra
// columns in table order (quoted when needed), one row per op, `\n` line
// ends. Deterministic: the same table gives the same bytes.
//
// Times are seconds in the shortest decimal that reads back to the table's
// values: with s32 columns, the shortest float text (std::to_chars(float))
// when it also reproduces `*_ns`, otherwise a decimal that reproduces both
// the s32 and the ns value; without s32 columns, ns / 1e9 as the shortest
// double text. Hence ParseOpsCsv(WriteOpsCsv(t)) == t for every table that
// ParseOpsCsv produced; a table without s32 columns comes back with them
// filled in (the reader always fills them).
//
// Preconditions: every column has table.size() entries (optional ones: that
// or none); extra column names differ from the known column names.
std::string WriteOpsCsv(const trace::OpsTable& table);

// WriteOpsCsv in pieces, for a table produced and written a batch of rows
// at a time (`strag simulate --out` streams its rows): the header line,
// then rows [begin, end), appended to `*out`. The header depends only on
// which columns the table has, so a batch with the same columns gives the
// same header; the concatenation of the header and every batch's rows is
// WriteOpsCsv of the whole table, byte for byte.
void AppendOpsCsvHeader(const trace::OpsTable& table, std::string* out);
void AppendOpsCsvRows(const trace::OpsTable& table, size_t begin, size_t end,
                      std::string* out);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_OPS_CSV_OPS_CSV_WRITER_H_
