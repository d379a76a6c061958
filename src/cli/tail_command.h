// SPDX-License-Identifier: Apache-2.0
// `strag tail N DIST [--slow-above T] [--backups B] [--json]`: what the
// slowest of N iid workers costs a synchronous step.

#ifndef STRAG_SRC_CLI_TAIL_COMMAND_H_
#define STRAG_SRC_CLI_TAIL_COMMAND_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace strag::cli {

// Runs the command; prints the figures (text or JSON) to stdout. Returns
// the error to report (kInvalidInput for a bad N, distribution or flag).
Status RunTail(const std::vector<std::string>& args);
extern const char kTailUsage[];

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_TAIL_COMMAND_H_
