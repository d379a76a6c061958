// SPDX-License-Identifier: Apache-2.0
// Reading a job's PyTorch profiler traces (one Kineto JSON file per rank, or
// a folder of them) in parallel; report/profiler_input.h makes them the
// analysis input.

#ifndef STRAG_SRC_LOAD_KINETO_JOB_H_
#define STRAG_SRC_LOAD_KINETO_JOB_H_

#include <cstddef>
#include <string>
#include <vector>

#include "base/collective.h"
#include "base/status.h"
#include "ingest/common/input_limits.h"
#include "report/profiler_input.h"
#include "report/report.h"

namespace strag::load {

// True for a folder or a `.json` / `.json.gz` file.
bool IsKinetoInput(const std::string& path);

// Reads every trace of `paths` (files, or folders of `*.json[.gz]`) on up to
// `threads` threads, each within `limits`, then report::ProfilerInput with
// `options` (its notes get the files that could not be read, as warnings;
// running out of memory on one ends the reading with that error). With a
// `collective` of several processes (mpirun), each reads its share of the
// files (ShareOf, in file order) and they exchange what they read: every
// process returns what one process reading them all would.
// Whether ReadKinetoJob reads `files` trace files by shares under
// `collective` (several processes and several files).
bool ReadsKinetoByShares(size_t files, const Collective* collective);

Result<report::ReportInput> ReadKinetoJob(
    const std::vector<std::string>& paths, size_t threads,
    report::ProfilerInputOptions options,
    const ingest::InputLimits& limits = {}, Collective* collective = nullptr);

}  // namespace strag::load

#endif  // STRAG_SRC_LOAD_KINETO_JOB_H_
