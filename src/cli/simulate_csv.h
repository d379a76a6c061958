// SPDX-License-Identifier: Apache-2.0
// The ops CSV of `strag simulate --out`: streamed while the job is
// simulated, window by window, into a multi-member gzip compressed on every
// core (ingest/common/parallel_gzip_writer.h), so that the run holds one
// window of the job and a few chunks of text, never the whole table or its
// text. The bytes, once inflated, are those of WriteOpsCsv(ToOpsTable(job)).

#ifndef STRAG_SRC_CLI_SIMULATE_CSV_H_
#define STRAG_SRC_CLI_SIMULATE_CSV_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "cli/output_file.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "trace/ops_table.h"

namespace strag::cli {

struct StreamedCsv {
  sim::SimulatedJob job;  // steps, step times and truth; no per-op arrays
  int64_t rows = 0;
  int64_t text_bytes = 0, gzip_bytes = 0;
};

// Simulates `spec` (options.window_steps steps at a time) and writes steps
// [first_step, last_step] to output `path` of `out` (committed by the
// caller). Errors: the simulator's (kInvalidInput) and "cannot write PATH:
// ..." (kIoError).
Result<StreamedCsv> SimulateToOpsCsv(const sim::JobSpec& spec,
                                     const sim::SimulateOptions& options,
                                     int64_t first_step, int64_t last_step,
                                     const std::string& path,
                                     OutputFiles* out);

// A whole table's ops CSV, gzipped the same way (the Kineto path, which
// builds the table anyway), written to output `path` of `out`.
Status WriteOpsCsvGzip(const trace::OpsTable& table, const std::string& path,
                       OutputFiles* out);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_SIMULATE_CSV_H_
