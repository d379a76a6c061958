// SPDX-License-Identifier: Apache-2.0
#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace strag::internal {

void CheckFailed(const char* file, int line, const char* condition,
                 const char* message) {
  std::fprintf(stderr, "strag: internal error: %s:%d: check failed: %s: %s\n",
               file, line, condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace strag::internal
