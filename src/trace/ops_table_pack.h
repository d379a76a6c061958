// SPDX-License-Identifier: Apache-2.0
// PackOpsTable / UnpackOpsTable: an OpsTable as bytes, every column and the
// extra columns' names and values, to travel between the processes of one
// analysis (base/collective.h) and come back identical.

#ifndef STRAG_SRC_TRACE_OPS_TABLE_PACK_H_
#define STRAG_SRC_TRACE_OPS_TABLE_PACK_H_

#include "base/byte_pack.h"
#include "base/status.h"
#include "trace/ops_table.h"

namespace strag::trace {

void PackOpsTable(const OpsTable& table, BytePacker* out);

// The table PackOpsTable wrote; kInternal when the bytes end early or its
// columns differ in length.
Result<OpsTable> UnpackOpsTable(ByteUnpacker* in);

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_OPS_TABLE_PACK_H_
