// SPDX-License-Identifier: Apache-2.0
// The flags of a report, shared by `strag analyze` and `strag simulate
// --analyze` so that both analyse with the same options and write the same
// outputs: parsed into report::ReportOptions, and the report written where
// they say (JSON, HTML, Perfetto files; the terminal summary).

#ifndef STRAG_SRC_CLI_REPORT_FLAGS_H_
#define STRAG_SRC_CLI_REPORT_FLAGS_H_

#include <optional>
#include <string>

#include "base/status.h"
#include "cli/flags.h"
#include "report/report.h"

namespace strag::cli {

// Adds the report flags to `spec`: --json --html --perfetto
// --perfetto-steps --fix --unfix --pool --top --threads --gpus --days
// --hours --usd-per-gpu-hour, and --quiet.
void AddReportFlags(FlagSpec* spec);

// The usage lines of the report flags (for each command's --help).
extern const char kReportFlagsUsage[];

// `profiler`: the input is profiler traces (default pool: role).
Result<report::ReportOptions> ParseReportOptions(const Flags& flags,
                                                 bool profiler);

// Writes the report's files and, unless --quiet, prints its summary; the
// report's warnings go to stderr first.
Status WriteReport(const Flags& flags, const report::Report& report);

// --usd-per-gpu-hour, checked (>= 0).
Result<std::optional<double>> UsdPerGpuHour(const Flags& flags);

// Writes `text` to `path` (kNotFound naming the path when it cannot).
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_REPORT_FLAGS_H_
