// SPDX-License-Identifier: Apache-2.0
#include "report/render/oncall_text.h"

#include "base/str_format.h"

namespace strag::report {

std::string OnCallLead(const diagnose::Diagnosis& d, double utilization,
                       bool with_utilization, const std::string& indent,
                       bool color) {
  std::string out;
  if (with_utilization) {
    out += indent + StrFormat("job utilization %.1f%%; dominant cause: %s\n",
                              100.0 * utilization, d.dominant_cause.c_str());
  }
  const diagnose::Straggler& s = d.largest_straggler;
  if (s.rank < 0) return out + indent + "largest straggler: none named\n";
  const std::string rank = "global rank " + std::to_string(s.rank);
  return out + indent + "largest straggler: " +
         (color ? "\033[1;31m" + rank + "\033[0m" : rank) + "; scope: " +
         d.scope + "\n";
}

}  // namespace strag::report
