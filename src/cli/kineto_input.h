// SPDX-License-Identifier: Apache-2.0
// Reading a job's PyTorch profiler traces (one Kineto JSON file per rank, or
// a folder of them) into what the what-if engine needs, with everything that
// was wrong with the input kept as notes for the report.

#ifndef STRAG_SRC_CLI_KINETO_INPUT_H_
#define STRAG_SRC_CLI_KINETO_INPUT_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "graph/generic/layout_inference.h"
#include "report/input_notes.h"
#include "whatif/prepared_trace.h"

namespace strag::cli {

// True for a folder or a `.json` / `.json.gz` file.
bool IsKinetoInput(const std::string& path);

struct KinetoJob {
  whatif::PreparedTrace prepared;
  report::InputNotes notes;
};

// Why the traces are too few for a diagnosis (a single rank, or fewer than
// half the world's ranks), or "" when they suffice. The analysis is still
// made, for the traced ranks only; the report says so. A single complete
// step suffices to name who everyone waited for (persistence unknown).
std::string CoverageProblem(const KinetoJob& job);

// Reads every trace of `paths` (files, or folders of `*.json[.gz]`) on up to
// `threads` threads, and lays the ranks out as `layout` says (its dp / pp
// given) or as the traces' communication shows (layout_inference.h). A file that cannot be read, or that claims a rank
// another file already has, becomes a warning and the job goes on without
// it; fails only when nothing is left to analyse.
// Files that name no rank get theirs from `rank_map` ("FILE=RANK,..." by
// file name) or, with a warning, in file-name order.
Result<KinetoJob> ReadKinetoJob(const std::vector<std::string>& paths,
                                size_t threads, graph::LayoutFlags layout,
                                const std::string& rank_map = "");

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_KINETO_INPUT_H_
