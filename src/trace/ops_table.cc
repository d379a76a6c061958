// SPDX-License-Identifier: Apache-2.0
#include "trace/ops_table.h"

namespace strag::trace {

void OpsTable::Reserve(size_t rows) {
  rank.reserve(rows);
  dp.reserve(rows);
  pp.reserve(rows);
  step.reserve(rows);
  op_type.reserve(rows);
  seq_id.reserve(rows);
  chunk.reserve(rows);
  microbatch.reserve(rows);
  global_chunk.reserve(rows);
  start_ns.reserve(rows);
  dur_ns.reserve(rows);
}

}  // namespace strag::trace
