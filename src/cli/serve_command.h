// SPDX-License-Identifier: Apache-2.0
// `strag serve`: the live collector (serve/collector.h), and `strag
// history`: jobs, alerts and exports from its database.

#ifndef STRAG_SRC_CLI_SERVE_COMMAND_H_
#define STRAG_SRC_CLI_SERVE_COMMAND_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "cli/flags.h"
#include "sim/job_spec.h"

namespace strag::cli {

extern const char kServeUsage[];
extern const char kHistoryUsage[];

Status RunServe(const std::vector<std::string>& args);
Status RunHistory(const std::vector<std::string>& args);
// `strag simulate SPEC --live URL`: the load generator.
Status RunSimulateLive(const Flags& flags, const sim::JobSpec& spec);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_SERVE_COMMAND_H_
