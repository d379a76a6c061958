// SPDX-License-Identifier: Apache-2.0
// `strag analyze TRACE [--meta META] [--json OUT] [--fix SEL]...`

#ifndef STRAG_SRC_CLI_ANALYZE_COMMAND_H_
#define STRAG_SRC_CLI_ANALYZE_COMMAND_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace strag::cli {

// Runs the command; prints the summary to stdout. Returns the error to report.
Status RunAnalyze(const std::vector<std::string>& args);
std::string AnalyzeUsage();

// `strag plan INPUT... [options]`: the same inputs and flags, the plan
// always on and shown first (its summary, --json strag.plan/1).
Status RunPlan(const std::vector<std::string>& args);
std::string PlanUsage();

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_ANALYZE_COMMAND_H_
