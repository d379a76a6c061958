// SPDX-License-Identifier: Apache-2.0
// StepSorter: the rows of an ops CSV in any order (the published traces
// come rank by rank), handed back grouped by increasing step, in bounded
// memory: an external merge sort. Rows are buffered and written to a
// temporary file as runs sorted by step (stably: a step's rows keep their
// input order), then the runs are merged. Memory: one run of rows, plus a
// small read buffer per run while merging. Only the columns the analysis
// reads are kept (not tp_rank, cp_rank, tokens or extra columns).

#ifndef STRAG_SRC_LOAD_STEP_SORTER_H_
#define STRAG_SRC_LOAD_STEP_SORTER_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "trace/ops_table.h"

namespace strag::load {

class StepSorter {
 public:
  // One row as it is spilled.
  struct Row {
    int64_t step, start_ns, dur_ns;
    int32_t start_rem_as;
    float start_s32, dur_s32;
    int32_t rank, dp, pp, seq_id, chunk, microbatch, global_chunk;
    trace::OpType op_type;
  };

  // `run_rows`: rows sorted in memory at a time. The temporary file goes to
  // `spill_dir` (unlinked at once: nothing is left behind).
  StepSorter(std::string spill_dir, size_t run_rows);

  Status Add(const trace::OpsTable& rows);
  // Every row added, grouped by increasing step, to `sink` in batches.
  Status Merge(const std::function<Status(const trace::OpsTable&)>& sink);

  uint64_t spilled_bytes() const { return spilled_bytes_; }

 private:
  Status WriteRun();

  std::string spill_dir_;
  size_t run_rows_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  std::vector<Row> buffer_;
  std::vector<std::pair<uint64_t, uint64_t>> runs_;  // first row, rows
  uint64_t rows_written_ = 0;
  uint64_t spilled_bytes_ = 0;
};

}  // namespace strag::load

#endif  // STRAG_SRC_LOAD_STEP_SORTER_H_
