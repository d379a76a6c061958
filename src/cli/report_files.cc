// SPDX-License-Identifier: Apache-2.0
#include "cli/report_files.h"

#include <algorithm>
#include <charconv>
#include <fstream>

#include "report/render/html_report.h"

namespace strag::cli {

Result<std::vector<size_t>> ChooseSteps(
    const whatif::PreparedTrace& trace, const whatif::WhatIfResult& result,
    const std::optional<std::string>& steps_flag) {
  std::vector<size_t> out;
  if (!steps_flag || steps_flag->empty()) {
    const auto& s = result.slowdown_per_step;
    if (s.empty()) return out;
    const auto worst =
        static_cast<size_t>(std::max_element(s.begin(), s.end()) - s.begin());
    const auto best =
        static_cast<size_t>(std::min_element(s.begin(), s.end()) - s.begin());
    out.push_back(worst);
    if (best != worst) out.push_back(best);
    return out;
  }
  std::string_view rest = *steps_flag;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    int64_t step = 0;
    const auto [ptr, ec] =
        std::from_chars(item.data(), item.data() + item.size(), step);
    const auto it =
        std::lower_bound(trace.steps.begin(), trace.steps.end(), step);
    if (ec != std::errc() || ptr != item.data() + item.size() ||
        it == trace.steps.end() || *it != step) {
      return InvalidInput("flag --perfetto-steps: \"" + std::string(item) +
                          "\" is not a step of the trace");
    }
    out.push_back(static_cast<size_t>(it - trace.steps.begin()));
  }
  return out;
}

Result<std::vector<whatif::Timeline>> BuildTimelines(
    const whatif::PreparedTrace& trace, const whatif::WhatIfResult& result,
    const std::vector<size_t>& step_indices) {
  std::vector<whatif::Timeline> out;
  for (size_t k : step_indices) {
    ASSIGN_OR_RETURN(whatif::Timeline t,
                     whatif::BuildTimeline(trace, k, result.ideal_node_cost));
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::optional<whatif::Timeline>> SlowestStepTimeline(
    const whatif::PreparedTrace& trace, const whatif::WhatIfResult& result) {
  ASSIGN_OR_RETURN(std::vector<size_t> steps,
                   ChooseSteps(trace, result, std::nullopt));
  if (steps.empty()) return std::optional<whatif::Timeline>{};
  ASSIGN_OR_RETURN(
      whatif::Timeline timeline,
      whatif::BuildTimeline(trace, steps[0], result.ideal_node_cost));
  return std::optional<whatif::Timeline>{std::move(timeline)};
}

Status WriteHtmlReport(const std::string& path, const std::string& title,
                       const whatif::WhatIfResult& result,
                       const trace::JobMeta& meta,
                       const diagnose::Diagnosis& diagnosis,
                       const econ::StepCost& cost,
                       const whatif::Timeline* timeline,
                       const report::InputNotes* input) {
  return WriteTextFile(path, report::RenderHtmlReport({.title = title,
                                                       .result = result,
                                                       .meta = meta,
                                                       .diagnosis = diagnosis,
                                                       .cost = cost,
                                                       .timeline = timeline,
                                                       .input = input}));
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return NotFound("cannot write " + path);
  return Status::Ok();
}

}  // namespace strag::cli
