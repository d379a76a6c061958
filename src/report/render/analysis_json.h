// SPDX-License-Identifier: Apache-2.0
// The analysis JSON (`strag analyze --json`, schema "strag.analysis/1",
// documented in docs/formats/analysis-json.md). Times in seconds; keys of
// maps are strings.

#ifndef STRAG_SRC_REPORT_RENDER_ANALYSIS_JSON_H_
#define STRAG_SRC_REPORT_RENDER_ANALYSIS_JSON_H_

#include <string>

#include "report/report.h"

namespace strag::report {

// The "cost" object when the report has a cost (gpus > 0), the "report"
// object (the diagnosis), "input" for profiler traces.
std::string RenderAnalysisJson(const Report& report);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_ANALYSIS_JSON_H_
