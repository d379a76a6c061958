// SPDX-License-Identifier: Apache-2.0
// The --rank-map flag of Kineto inputs. Reading the traces themselves is
// load/kineto_job.h (shared with the Python module).

#ifndef STRAG_SRC_CLI_KINETO_INPUT_H_
#define STRAG_SRC_CLI_KINETO_INPUT_H_

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"

namespace strag::cli {

// --rank-map "FILE=RANK,...".
Result<std::map<std::string, int32_t>> ParseRankMap(const std::string& text);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_KINETO_INPUT_H_
