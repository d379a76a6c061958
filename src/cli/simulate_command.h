// SPDX-License-Identifier: Apache-2.0
// `strag simulate SPEC|--preset NAME [--out DIR] [--analyze] ...`

#ifndef STRAG_SRC_CLI_SIMULATE_COMMAND_H_
#define STRAG_SRC_CLI_SIMULATE_COMMAND_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace strag::cli {

Status RunSimulate(const std::vector<std::string>& args);
std::string SimulateUsage();

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_SIMULATE_COMMAND_H_
