// SPDX-License-Identifier: Apache-2.0
// DistributeOpsCsv: an ops CSV read and prepared by the processes of one
// analysis together (`mpirun -n K strag analyze --window-ops N`), each
// holding only its share of the job: the scale-out of docs/scale-out.md.
//
//   1. The text is cut the same way by every process into chunks of whole
//      lines, and each parses the header and its chunks (k % K == its
//      rank): a plain file is read by byte ranges, only those chunks; a
//      gzip file whose members say their size (ingest::AddMemberSize, as
//      `strag simulate` writes) by members, only those; any other gzip
//      stream is inflated whole (it cannot be entered in the middle;
//      inflating costs little beside parsing).
//   2. The per-step op counts are gathered: every process knows the job's
//      steps, and each owns the contiguous share of them that
//      whatif::AnalyzeWindows replays there (ShareOf).
//   3. Rows go to their step's owner in one personal exchange
//      (Collective::AllToAll: pairwise MPI_Sendrecv), tagged with their
//      chunk, so that each owner lays its rows out in input order, grouped
//      by step.
//   4. The rows of the first step go to every process, which builds the
//      same shape (layout, model, workers) from them; each prepares its
//      steps in windows of at least N ops and keeps only the prepared
//      arrays (20 bytes per op).
// whatif::AnalyzeWindows then exchanges only per-step series and pooled
// values: the report is the one process's windowed report, byte for byte.
//
// A process that cannot vouch for its chunks (a parse error, or a line
// with an odd number of quotes: a quoted line break that a chunk boundary
// may cut) makes every process give up (nullopt): the caller then reads
// the file alone, which gives the same report, or the same error with the
// same line, as one process does.

#ifndef STRAG_SRC_LOAD_DISTRIBUTED_OPS_CSV_H_
#define STRAG_SRC_LOAD_DISTRIBUTED_OPS_CSV_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/collective.h"
#include "base/status.h"
#include "load/held_windows.h"
#include "load/streamed_ops_csv.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::load {

// Text bytes per chunk (a chunk ends at the first line end past it).
inline constexpr size_t kDistributedChunkBytes = size_t{4} << 20;

struct DistributedJob {
  whatif::PreparedTrace shape;           // the whole job: every step, no slots
  std::unique_ptr<HeldWindows> windows;  // this process's steps
  uint64_t ops = 0;                      // the whole job's
  uint64_t my_ops = 0;                   // this process's
  uint64_t exchanged_bytes = 0;          // rows this process sent to others
  // How the file was shared: "byte ranges" (plain), "gzip members" (members
  // that say their size), "the whole gzip stream" (inflated by each).
  std::string read_by;
};

// See above; every process of `c` calls it. `chunk_bytes` is for tests
// (0: kDistributedChunkBytes). nullopt: some process cannot vouch for its
// chunks, or the job has fewer steps than processes, and every process
// knows it (each then reads the file alone).
Result<std::optional<DistributedJob>> DistributeOpsCsv(
    const std::string& path, const trace::JobMeta& meta,
    const StreamOptions& options, Collective* c, size_t chunk_bytes = 0);

}  // namespace strag::load

#endif  // STRAG_SRC_LOAD_DISTRIBUTED_OPS_CSV_H_
