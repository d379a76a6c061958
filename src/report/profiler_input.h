// SPDX-License-Identifier: Apache-2.0
// A job's PyTorch profiler traces (one RankTrace per file, as read) made
// into the analysis input: ranks assigned and de-duplicated (profiling
// cycles merged), the generic model built and its clocks aligned, warm-up
// steps dropped, the layout inferred (or taken from the flags), pipeline
// peers assigned where the traces name none, host time and input size
// measured; everything wrong with the input kept as notes.
//
// Pure: the files are read at the edge (load/kineto_job.h).

#ifndef STRAG_SRC_REPORT_PROFILER_INPUT_H_
#define STRAG_SRC_REPORT_PROFILER_INPUT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/generic/layout_inference.h"
#include "report/report.h"
#include "trace/rank_trace.h"

namespace strag::report {

struct ProfilerInputOptions {
  std::string source = {};   // what was analysed (the first path)
  trace::JobMeta meta = {};  // world_size is filled in from the traces if 0
  graph::LayoutFlags layout = {};  // dp / pp given, or 0: inferred
  // Ranks of files by file name (they also override what a file says);
  // files that name no rank and are not here are numbered in file-name
  // order, with a warning.
  std::map<std::string, int32_t> rank_map = {};
  InputNotes notes = {};         // from reading: files skipped, and why
  std::string read_errors = {};  // the reading errors, for the message
                                 // when no trace is left
};

// `read` holds one entry per file (nullopt: a file that could not be read).
// A file that claims a rank another file has, with the same steps, is a
// warning and left out; fails only when nothing is left to analyse. Too few
// ranks for a diagnosis (one, or under half the world) set `coverage`.
Result<ReportInput> ProfilerInput(
    std::vector<std::optional<trace::RankTrace>> read,
    ProfilerInputOptions options);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_PROFILER_INPUT_H_
