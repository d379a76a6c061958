// SPDX-License-Identifier: Apache-2.0
// The flags of a report, shared by `strag analyze` and `strag simulate
// --analyze` so that both analyse with the same options and write the same
// outputs: parsed into report::ReportOptions, and the report written where
// they say (JSON, HTML, Perfetto files, "-" for stdout; the terminal
// summary), whole or not at all (cli/output_file.h).

#ifndef STRAG_SRC_CLI_REPORT_FLAGS_H_
#define STRAG_SRC_CLI_REPORT_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "cli/flags.h"
#include "cli/output_file.h"
#include "report/report.h"

namespace strag::cli {

// Adds the report flags to `spec`: --json --html --perfetto
// --perfetto-steps --fix --unfix --pool --top --threads --gpus --days
// --hours --usd-per-gpu-hour, --plan --layers --checkpoint-interval-min
// --restart-min, and --quiet.
void AddReportFlags(FlagSpec* spec);

// The usage lines of the report flags (for each command's --help).
extern const char kReportFlagsUsage[];

// `profiler`: the input is profiler traces (default pool: role); `plan`:
// the plan is always made (strag plan), else with --plan.
Result<report::ReportOptions> ParseReportOptions(const Flags& flags,
                                                 bool profiler,
                                                 bool plan = false);

// Declares the report's outputs (--json, --html, --perfetto) in `out`:
// checked before any work (add the command's inputs to `out` first).
Status DeclareReportOutputs(const Flags& flags, OutputFiles* out);

// Checks --perfetto-steps against the steps a job can have, [first, last],
// before the work that would find a missing one (a looser check: the
// report finds steps absent from the trace).
Status CheckTimelineSteps(const report::ReportOptions& options, int64_t first,
                          int64_t last);

// What the outputs show: the analysis (`strag analyze`, `simulate
// --analyze`), or the plan (`strag plan`: the summary is the plan, --json
// is strag.plan/1).
enum class ReportView { kAnalysis, kPlan };

// The planner's options: set with --plan, or `always` (strag plan); the
// plan-only flags without them are an error.
Result<std::optional<report::PlanOptions>> ParsePlanOptions(const Flags& flags,
                                                            bool always);

// Renders the report's files, writes them to `out` and commits every output
// of `out` (all or none); then, unless --quiet, prints the summary: to
// stdout, or to stderr when an output is stdout ("-"). The report's warnings
// go to stderr first.
Status WriteReport(const Flags& flags, const report::Report& report,
                   OutputFiles* out, ReportView view = ReportView::kAnalysis);

// --usd-per-gpu-hour, checked (>= 0).
Result<std::optional<double>> UsdPerGpuHour(const Flags& flags);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_REPORT_FLAGS_H_
