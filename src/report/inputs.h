// SPDX-License-Identifier: Apache-2.0
// The analysis input from an ops table (a Megatron ops CSV, or a simulated
// job written out) and from a simulated job in memory. Profiler traces:
// profiler_input.h. Pure.

#ifndef STRAG_SRC_REPORT_INPUTS_H_
#define STRAG_SRC_REPORT_INPUTS_H_

#include <string>

#include "base/status.h"
#include "report/report.h"
#include "sim/simulator.h"
#include "trace/job_meta.h"
#include "trace/ops_table.h"

namespace strag::report {

// The table is only read: the caller may release it afterwards (the
// prepared arrays are all the analysis needs). Prepared on `threads`
// threads (0: one per core; whatif::PrepareTrace).
Result<ReportInput> OpsTableInput(const trace::OpsTable& table,
                                  trace::JobMeta meta, std::string source,
                                  size_t threads = 1);

// OpsTableInput for a table the caller drops afterwards: columns the
// preparation no longer reads are released on the way
// (whatif::PrepareTraceReleasing), so that the table and the prepared
// arrays are not held whole at once.
Result<ReportInput> OpsTableInputReleasing(trace::OpsTable* table,
                                           trace::JobMeta meta,
                                           std::string source,
                                           size_t threads = 1);

// The simulated job as the analysis sees a trace, without an ops table
// (which would cost ~100 bytes per op): the replayed starts, the simulated
// costs (durations and transfer times, exact) and launch delays, moved out
// of `job`. Source "simulated NAME".
ReportInput SimulatedInput(sim::SimulatedJob* job);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_INPUTS_H_
