// SPDX-License-Identifier: Apache-2.0
// The short plain-text summary `strag analyze` prints.

#ifndef STRAG_SRC_REPORT_RENDER_TERMINAL_SUMMARY_H_
#define STRAG_SRC_REPORT_RENDER_TERMINAL_SUMMARY_H_

#include <string>

#include "diagnose/diagnosis.h"
#include "econ/step_cost.h"
#include "report/input_notes.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"

namespace strag::report {

struct SummaryOptions {
  std::string source;   // what was analysed (file name)
  int top = 5;          // rows per ranking
  econ::StepCost cost;  // gpus == 0: not shown
  const diagnose::Diagnosis* diagnosis = nullptr;  // not owned; optional
  bool color = false;  // ANSI colours (the CLI sets it on a terminal only)
  const InputNotes* input = nullptr;  // not owned; optional
};

std::string RenderTerminalSummary(const whatif::WhatIfResult& result,
                                  const trace::JobMeta& meta,
                                  const SummaryOptions& options);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_TERMINAL_SUMMARY_H_
