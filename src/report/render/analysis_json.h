// SPDX-License-Identifier: Apache-2.0
// The analysis JSON (`strag analyze --json`, schema "strag.analysis/1",
// documented in docs/formats/analysis-json.md). Times in seconds; keys of
// maps are strings.

#ifndef STRAG_SRC_REPORT_RENDER_ANALYSIS_JSON_H_
#define STRAG_SRC_REPORT_RENDER_ANALYSIS_JSON_H_

#include <string>

#include "diagnose/diagnosis.h"
#include "econ/step_cost.h"
#include "report/input_notes.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"

namespace strag::report {

// `cost` (when gpus > 0) adds the "cost" object, `diagnosis` (when not
// null) the "report" object.
std::string RenderAnalysisJson(const whatif::WhatIfResult& result,
                               const trace::JobMeta& meta,
                               const econ::StepCost& cost = {},
                               const diagnose::Diagnosis* diagnosis = nullptr,
                               const InputNotes* input = nullptr);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_ANALYSIS_JSON_H_
