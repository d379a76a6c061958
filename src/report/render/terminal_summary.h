// SPDX-License-Identifier: Apache-2.0
// The short plain-text summary `strag analyze` prints.

#ifndef STRAG_SRC_REPORT_RENDER_TERMINAL_SUMMARY_H_
#define STRAG_SRC_REPORT_RENDER_TERMINAL_SUMMARY_H_

#include <string>

#include "report/report.h"

namespace strag::report {

struct SummaryOptions {
  int top = 5;         // rows per ranking
  bool color = false;  // ANSI colours (the CLI sets it on a terminal only)
};

std::string RenderTerminalSummary(const Report& report,
                                  const SummaryOptions& options = {});

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_TERMINAL_SUMMARY_H_
