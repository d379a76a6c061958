// SPDX-License-Identifier: Apache-2.0
// The plan section of the HTML report: the same ranking as the terminal
// and the JSON, one table row per fix.

#ifndef STRAG_SRC_REPORT_RENDER_PLAN_HTML_H_
#define STRAG_SRC_REPORT_RENDER_PLAN_HTML_H_

#include <string>

#include "mitigate/plan.h"

namespace strag::report {

std::string PlanHtmlSection(const mitigate::Plan& plan, const char* device);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_PLAN_HTML_H_
