// SPDX-License-Identifier: Apache-2.0
// The plan as JSON: the "strag.plan/1" document of `strag plan --json`
// (docs/formats/plan-json.md), and the same object as the "plan" member of
// the analysis JSON (`strag analyze --plan --json`).

#ifndef STRAG_SRC_REPORT_RENDER_PLAN_JSON_H_
#define STRAG_SRC_REPORT_RENDER_PLAN_JSON_H_

#include <string>

#include "base/json_writer.h"
#include "mitigate/plan.h"
#include "report/report.h"

namespace strag::report {

// The plan object: the current step, the band, the ranked rows, the
// policies that do not apply.
void WritePlan(JsonWriter* w, const mitigate::Plan& plan);

// The strag.plan/1 document of a report with a plan.
std::string RenderPlanJson(const Report& report);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_PLAN_JSON_H_
