// SPDX-License-Identifier: Apache-2.0
// StreamOpsCsv: an ops CSV too large to hold, read once in windows of
// whole steps, each window prepared (whatif::PrepareWindow) and spilled to
// a temporary file as its replay arrays (16 bytes per op); the analysis
// then reads the windows back (whatif::AnalyzeWindows) with the same
// results, bit for bit, as the in-memory path. Memory: one window of rows
// and one of prepared arrays, whatever the job's length.
//
// Rows grouped by step in increasing order (what `strag simulate` writes,
// and a trace written step by step) are read once; any other order (the
// published traces come rank by rank) is found on the way, and the file is
// read again through an external sort by step (load/step_sorter.h). The
// layout, workers and model come from the first window (every step must
// have the same ops, as in the in-memory path).

#ifndef STRAG_SRC_LOAD_STREAMED_OPS_CSV_H_
#define STRAG_SRC_LOAD_STREAMED_OPS_CSV_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "base/status.h"
#include "ingest/common/gunzip_stream.h"
#include "ingest/common/input_limits.h"
#include "load/held_windows.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::load {

struct StreamOptions {
  // Ops per window at least (whole steps: a window ends at a step
  // boundary past this many rows).
  size_t window_ops = size_t{1} << 23;
  std::string spill_dir = "/tmp";  // where the temporary file goes
  size_t threads = 0;              // parsing threads (0: one per core)
  ingest::InputLimits limits = {};
  // Inflater of a gzip file: ISA-L where the build has it, else zlib (see
  // ingest::ReadOpsCsvOptions::gzip_engine).
  ingest::GzipEngine gzip_engine = ingest::GzipEngine::kIsal;
  // Keep the prepared windows in memory (load/held_windows.h) instead of
  // spilling them: for a job that fits, whose table alone would not.
  bool hold = false;
  // Rows out of step order: read the file again through the external sort
  // (true), or stop there and return no windows (false: the caller reads
  // the file another way).
  bool sort = true;
};

// The windows of a streamed job, read back from their spill file on every
// ForEachWindow call (one window in memory at a time).
class SpilledWindows : public whatif::WindowSource {
 public:
  // Takes the spill file (closed with this).
  SpilledWindows(whatif::PreparedTrace shape, std::FILE* spill,
                 std::string path);
  ~SpilledWindows() override;
  SpilledWindows(const SpilledWindows&) = delete;
  SpilledWindows& operator=(const SpilledWindows&) = delete;
  Status ForEachWindow(
      const std::function<Status(const whatif::PreparedTrace&)>& fn) override;

 private:
  whatif::PreparedTrace shape_;
  whatif::PreparedTrace window_;  // reused: the model is copied once
  std::FILE* spill_;
  std::string path_;
};

struct StreamedJob {
  // Spilled (SpilledWindows) or held (HeldWindows); null when the rows were
  // out of step order and StreamOptions::sort was false.
  std::unique_ptr<whatif::WindowSource> windows;
  whatif::PreparedTrace shape;  // the job: every step, no per-slot arrays
  uint64_t ops = 0;
  size_t num_windows = 0;
  uint64_t spill_bytes = 0;
  // The rows were not grouped by step: read twice, through an external
  // sort (load/step_sorter.h) of this many bytes.
  bool sorted = false;
  uint64_t sort_bytes = 0;
};

// Reads the ops CSV at `path` (plain or gzip). Errors name the file: the
// reader's (line, column), a step out of order, what PrepareWindow finds
// (an op missing or twice in a step), a spill file that cannot be written.
Result<StreamedJob> StreamOpsCsv(const std::string& path,
                                 const trace::JobMeta& meta,
                                 const StreamOptions& options);

}  // namespace strag::load

#endif  // STRAG_SRC_LOAD_STREAMED_OPS_CSV_H_
