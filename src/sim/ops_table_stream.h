// SPDX-License-Identifier: Apache-2.0
// OpsTableStream: the ops table of a simulated job built window by window
// (SimulateInWindows) in batches of rows, so that a job of any length is
// written without its whole table (`strag simulate --out`). ToOpsTable is
// the same stream run once over a whole job.
//
// Row order (ToOpsTable's): step, then stage, then DP replica, then the
// stage's nodes in node order; step k starts where step k - 1 ended plus
// 1 ms (its span rounded to ns), whether or not k - 1 is written.

#ifndef STRAG_SRC_SIM_OPS_TABLE_STREAM_H_
#define STRAG_SRC_SIM_OPS_TABLE_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "sim/simulator.h"
#include "trace/ops_table.h"

namespace strag::sim {

class OpsTableStream {
 public:
  // Receives a batch: the rows appended to `table` so far. It may render
  // them; the stream clears the table after it returns (keeping capacity).
  using Flush = std::function<Status(const trace::OpsTable& table)>;

  // Writes steps [first_step, last_step] of `job` (its schedule and layout:
  // any window of the job, or the job itself).
  OpsTableStream(const SimulatedJob& job, int64_t first_step,
                 int64_t last_step);

  // Appends the rows of the window's written steps to `table` (with the
  // columns of a simulated trace: tp_rank, tokens and seq_lens), handing
  // them to `flush` whenever at least `batch_rows` are held. Windows come
  // in step order, every step once (the origins add up).
  Status Add(const SimulatedJob& window, size_t batch_rows,
             trace::OpsTable* table, const Flush& flush);

  size_t rows() const { return rows_; }  // rows appended so far

 private:
  void AppendWorker(const SimulatedJob& window, size_t k, int32_t stage,
                    size_t d, trace::OpsTable* table);

  int64_t first_step_, last_step_;
  int64_t origin_ns_ = 0;  // start of the next step
  size_t rows_ = 0;
  std::vector<std::vector<uint32_t>> nodes_of_stage_;
  std::string lens_;  // scratch
};

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_OPS_TABLE_STREAM_H_
