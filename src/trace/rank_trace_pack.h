// SPDX-License-Identifier: Apache-2.0
// PackRankTrace / UnpackRankTrace: a RankTrace as bytes, every field, to
// travel between the processes of one analysis (base/collective.h) and come
// back identical: under mpirun each process reads a share of a job's
// profiler traces and every process gets all of them.

#ifndef STRAG_SRC_TRACE_RANK_TRACE_PACK_H_
#define STRAG_SRC_TRACE_RANK_TRACE_PACK_H_

#include "base/byte_pack.h"
#include "base/status.h"
#include "trace/rank_trace.h"

namespace strag::trace {

void PackRankTrace(const RankTrace& trace, BytePacker* out);

// The trace PackRankTrace wrote; kInternal when the bytes end early or its
// columns differ in length.
Result<RankTrace> UnpackRankTrace(ByteUnpacker* in);

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_RANK_TRACE_PACK_H_
