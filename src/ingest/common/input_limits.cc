// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/input_limits.h"

namespace strag::ingest {

std::string LimitText(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    const int shift = 30 - 10 * i;
    const uint64_t unit = uint64_t{1} << shift;
    if (bytes >= unit && bytes % unit == 0) {
      return std::to_string(bytes >> shift) + " " + kUnits[i];
    }
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

}  // namespace strag::ingest
