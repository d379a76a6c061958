// SPDX-License-Identifier: Apache-2.0
// `strag cost --slowdown S --gpus N (--days D | --hours H)
//  [--usd-per-gpu-hour X] [--json]`: what a run loses to its stragglers.

#ifndef STRAG_SRC_CLI_COST_COMMAND_H_
#define STRAG_SRC_CLI_COST_COMMAND_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace strag::cli {

// Runs the command; prints the figures (text or JSON) to stdout. Returns
// the error to report (kInvalidInput for bad flags).
Status RunCost(const std::vector<std::string>& args);
extern const char kCostUsage[];

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_COST_COMMAND_H_
