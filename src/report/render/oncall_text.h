// SPDX-License-Identifier: Apache-2.0
// The opening lines of the on-call block, shared by `strag analyze`'s
// summary and the live collector's (`strag serve`): utilization and
// dominant cause, then the largest straggler and its scope, in the same
// words from the same Diagnosis.

#ifndef STRAG_SRC_REPORT_RENDER_ONCALL_TEXT_H_
#define STRAG_SRC_REPORT_RENDER_ONCALL_TEXT_H_

#include <string>

#include "diagnose/diagnosis.h"

namespace strag::report {

// "job utilization 87.3%; dominant cause: ...\n" (when `with_utilization`)
// and "largest straggler: global rank 9; scope: ...\n" (or "none named"),
// each line after `indent`; the rank in bold red with `color`.
std::string OnCallLead(const diagnose::Diagnosis& d, double utilization,
                       bool with_utilization, const std::string& indent,
                       bool color);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_ONCALL_TEXT_H_
