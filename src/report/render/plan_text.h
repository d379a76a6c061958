// SPDX-License-Identifier: Apache-2.0
// The plan as text: the ranked fixes (`strag plan`, and the plan section of
// `strag analyze --plan`).

#ifndef STRAG_SRC_REPORT_RENDER_PLAN_TEXT_H_
#define STRAG_SRC_REPORT_RENDER_PLAN_TEXT_H_

#include <string>

#include "mitigate/plan.h"
#include "report/report.h"

namespace strag::report {

// The plan section: the current step, the ranked fixes with their gain,
// cost and side effects, those within noise, those that do not apply.
// `device`: "GPU", or "CPU" for a CPU job (DeviceWord), whose hours have no
// price unless one was given.
void AppendPlanSection(const mitigate::Plan& plan, bool color,
                       const char* device, std::string* out);

// One line naming the best fix for the summary's "next:" line, or why
// none gains ("" without rows).
std::string NextStep(const mitigate::Plan& plan, const char* device);

// "64 GPUs at $2.00 per GPU-hour", "2 ranks (CPU time, no price)".
std::string PlanFleet(const mitigate::Plan& plan, const char* device);

// `strag plan`'s summary: the job in four lines, then the plan section.
std::string RenderPlanSummary(const Report& report, bool color);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_PLAN_TEXT_H_
