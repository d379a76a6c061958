// SPDX-License-Identifier: Apache-2.0
// `strag simulate SPEC|--preset NAME [--out DIR] [--analyze] ...`

#ifndef STRAG_SRC_CLI_SIMULATE_COMMAND_H_
#define STRAG_SRC_CLI_SIMULATE_COMMAND_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "cli/flags.h"
#include "sim/job_spec.h"

namespace strag::cli {

Status RunSimulate(const std::vector<std::string>& args);
std::string SimulateUsage();

// `strag simulate SPEC --live URL` plays the job to a collector over HTTP,
// which lives in strag-serve (src/cli/serve_main.cc) with the rest of the
// HTTP code: strag hands such a command over to it, and strag-serve sets
// this before running it.
using LiveSimulation = Status (*)(const Flags& flags, const sim::JobSpec& spec);
void SetLiveSimulation(LiveSimulation play);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_SIMULATE_COMMAND_H_
