// SPDX-License-Identifier: Apache-2.0
// OpsTable: one row per traced operation, stored column by column.
//
// Row i describes one op of one worker in one training step. Times are int64
// nanoseconds (`start_ns` relative to whatever origin the input used, `dur_ns`
// >= 0). When the input stored times as binary32 seconds (the ops CSV of the
// published traces), the exact source values are kept in `start_s32` /
// `dur_s32` too, because the published what-if method does its preprocessing
// in binary32 (whatif-spec.md §8); those two columns are empty otherwise.
// Such inputs also keep each start exactly (`start_rem_as`): a step is
// rebased on the exact text before any binary32 rounding, so that moving
// the origin (to an epoch of 1.7e9 s, say) changes no result.

#ifndef STRAG_SRC_TRACE_OPS_TABLE_H_
#define STRAG_SRC_TRACE_OPS_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/column.h"
#include "trace/exact_time.h"
#include "trace/extra_column.h"
#include "trace/op_type.h"

namespace strag::trace {

// The rows' keys (global rank, dp rank, stage, step) by runs of
// consecutive rows that share them: run k is rows [first[k], first[k + 1]),
// and `first` ends with the row count. Ops CSVs list a worker's ops of a
// step together, so a million rows make a few thousand runs.
struct KeyRuns {
  std::vector<size_t> first = {0};
  std::vector<int32_t> rank, dp, pp;
  std::vector<int64_t> step;

  size_t size() const { return rank.size(); }  // runs
  // Rows [first.back(), end) with these keys: a new run, or the last one
  // longer where its keys are the same.
  void Append(size_t end, int32_t row_rank, int32_t row_dp, int32_t row_pp,
              int64_t row_step) {
    if (size() == 0 || rank.back() != row_rank || dp.back() != row_dp ||
        pp.back() != row_pp || step.back() != row_step) {
      rank.push_back(row_rank), dp.push_back(row_dp), pp.push_back(row_pp);
      step.push_back(row_step);
      first.push_back(end);
    } else {
      first.back() = end;
    }
  }
};

struct OpsTable {
  // Required columns (same length).
  Column<int32_t> rank;  // global rank of the traced worker
  Column<int32_t> dp;    // data-parallel rank
  Column<int32_t> pp;    // pipeline stage
  Column<int64_t> step;  // training step id (need not be dense)
  Column<OpType> op_type;
  Column<int32_t> seq_id;  // order among same-type ops of a worker in a step
  Column<int32_t> chunk;   // model chunk within the stage (`mc`), -1 if none
  Column<int32_t> microbatch;    // `mb_id`, -1 if none
  Column<int32_t> global_chunk;  // `gmc` = chunk * pp_size + stage, -1 if none
  Column<int64_t> start_ns;
  Column<int64_t> dur_ns;

  // Exact binary32 source times in seconds; empty unless the input had them.
  Column<float> start_s32;
  Column<float> dur_s32;
  // The source start minus `start_ns`, in attoseconds; present with
  // `start_s32`.
  Column<int32_t> start_rem_as;
  // Set by whatif::PrepareTraceReleasing once it has rebased `start_s32` in
  // place (each step's starts since its earliest, in binary32 seconds) and
  // dropped `start_ns` and `start_rem_as`.
  bool starts_rebased = false;

  // Where the reader was asked for it (ReadOpsCsvOptions::key_runs): the
  // keys by runs, and rank, dp, pp and step empty (20 of the 57 bytes a row
  // of the published traces takes). Only whatif::PrepareTrace reads such a
  // table; every other reader wants the columns.
  bool keys_in_runs = false;
  KeyRuns key_runs;

  // Optional typed columns; empty when absent from the input.
  Column<int32_t> tp;      // tensor-parallel rank (`tp_rank`)
  Column<int32_t> cp;      // context-parallel rank (`cp_rank`)
  Column<int64_t> tokens;  // tokens in the microbatch
  std::vector<ExtraColumn> extra;

  size_t size() const { return op_type.size(); }
  bool has_s32_times() const { return !start_s32.empty(); }

  // The source start exactly (to the attosecond); start_ns alone when the
  // input had no finer digits.
  ExactTime ExactStart(size_t row) const {
    return {start_ns[row], start_rem_as.empty() ? 0 : start_rem_as[row]};
  }

  // Duration in binary32 seconds: the exact source value when present, else
  // the nanoseconds rounded to binary32. (Start times have no such accessor:
  // absolute times must be rebased per step before rounding, which
  // whatif::PrepareTrace does with ExactStart and SecondsSinceF32.)
  float DurS32(size_t row) const {
    return has_s32_times()
               ? dur_s32[row]
               : static_cast<float>(static_cast<double>(dur_ns[row]) * 1e-9);
  }

  // Moves the keys from their columns into runs (keys_in_runs), or back.
  void KeysToRuns();
  void KeysToColumns();

  void Reserve(size_t rows);
  // Keeps the first `rows` rows (of every column that has them).
  void Truncate(size_t rows);
  // Empties every column, keeping its memory (and the extra columns' names).
  void ClearRows();
  // Appends rows [from, to) of `other`, whose columns are these: each
  // column that `other` has, and the extra columns' values that both hold.
  void AppendRows(const OpsTable& other, size_t from, size_t to);

  // fn(this table's column, other's same column) for every typed column
  // (`other` may be this table), always in the same order.
  template <typename Self, typename Other, typename Fn>
  static void ForEachColumn(Self& self, Other& other, Fn fn) {
    fn(self.rank, other.rank), fn(self.dp, other.dp), fn(self.pp, other.pp);
    fn(self.step, other.step), fn(self.op_type, other.op_type);
    fn(self.seq_id, other.seq_id), fn(self.chunk, other.chunk);
    fn(self.microbatch, other.microbatch);
    fn(self.global_chunk, other.global_chunk);
    fn(self.start_ns, other.start_ns), fn(self.dur_ns, other.dur_ns);
    fn(self.start_s32, other.start_s32), fn(self.dur_s32, other.dur_s32);
    fn(self.start_rem_as, other.start_rem_as), fn(self.tp, other.tp);
    fn(self.cp, other.cp), fn(self.tokens, other.tokens);
  }
};

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_OPS_TABLE_H_
