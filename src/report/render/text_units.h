// SPDX-License-Identifier: Apache-2.0
// How the text renderers write times.

#ifndef STRAG_SRC_REPORT_RENDER_TEXT_UNITS_H_
#define STRAG_SRC_REPORT_RENDER_TEXT_UNITS_H_

#include <cmath>
#include <string>

#include "base/str_format.h"

namespace strag::report {

// "420.2 ms" below a second, "46.34 s" above.
inline std::string Duration(double seconds) {
  if (std::abs(seconds) < 1.0) return StrFormat("%.1f ms", seconds * 1e3);
  return StrFormat("%.2f s", seconds);
}

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_TEXT_UNITS_H_
