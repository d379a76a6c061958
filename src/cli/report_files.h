// SPDX-License-Identifier: Apache-2.0
// The file outputs shared by `strag analyze` and `strag simulate --analyze`:
// the Perfetto timeline of chosen steps.

#ifndef STRAG_SRC_CLI_REPORT_FILES_H_
#define STRAG_SRC_CLI_REPORT_FILES_H_

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "diagnose/diagnosis.h"
#include "econ/step_cost.h"
#include "report/input_notes.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"
#include "whatif/timeline.h"

namespace strag::cli {

// The steps to show: `steps_flag` ("821,414": step ids) or, when empty, the
// slowest and the fastest step (by S of the step).
Result<std::vector<size_t>> ChooseSteps(
    const whatif::PreparedTrace& trace, const whatif::WhatIfResult& result,
    const std::optional<std::string>& steps_flag);

Result<std::vector<whatif::Timeline>> BuildTimelines(
    const whatif::PreparedTrace& trace, const whatif::WhatIfResult& result,
    const std::vector<size_t>& step_indices);

// The timeline of the slowest step (by S), or nullopt for a trace without
// steps: built once, for the diagnosis detail and the HTML report.
Result<std::optional<whatif::Timeline>> SlowestStepTimeline(
    const whatif::PreparedTrace& trace, const whatif::WhatIfResult& result);

// Writes the HTML report to `path`; `timeline` (optional) is the step shown.
Status WriteHtmlReport(const std::string& path, const std::string& title,
                       const whatif::WhatIfResult& result,
                       const trace::JobMeta& meta,
                       const diagnose::Diagnosis& diagnosis,
                       const econ::StepCost& cost,
                       const whatif::Timeline* timeline,
                       const report::InputNotes* input = nullptr);

// Writes `text` to `path` (kNotFound naming the path when it cannot).
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_REPORT_FILES_H_
