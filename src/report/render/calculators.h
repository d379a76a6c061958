// SPDX-License-Identifier: Apache-2.0
// The calculators' answers as text and JSON: `strag tail` (schema
// strag.tail/1) and `strag cost` (strag.cost/1), documented in
// docs/formats/calculators.md.

#ifndef STRAG_SRC_REPORT_RENDER_CALCULATORS_H_
#define STRAG_SRC_REPORT_RENDER_CALCULATORS_H_

#include <string>

#include "econ/run_cost.h"
#include "report/calculators.h"

namespace strag::report {

std::string RenderTailText(const TailAnswer& answer);
std::string RenderTailJson(const TailAnswer& answer);
std::string RenderCostText(const econ::RunCost& cost);
std::string RenderCostJson(const econ::RunCost& cost);

// `value` rounded to `decimals` places with thousands separators:
// (98304, 0) -> "98,304"; (1234567.5, 2) -> "1,234,567.50".
std::string FormatGrouped(double value, int decimals);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_CALCULATORS_H_
