// SPDX-License-Identifier: Apache-2.0
// The HTML report (`--html FILE`): one self-contained file that works
// offline. The on-call summary, the findings and the ranked workers are HTML
// text; the charts (worker heatmap, slowdown per step, by op type, by stage,
// the worst step's timeline actual vs ideal) are drawn by ECharts, inlined
// with strag's report script (web/) at build time (cmake/echarts.cmake), from
// one JSON blob in <script id="strag-data" type="application/json">.

#ifndef STRAG_SRC_REPORT_RENDER_HTML_REPORT_H_
#define STRAG_SRC_REPORT_RENDER_HTML_REPORT_H_

#include <string>
#include <string_view>

#include "diagnose/diagnosis.h"
#include "econ/step_cost.h"
#include "report/input_notes.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"
#include "whatif/timeline.h"

namespace strag::report {

// What one report shows. Nothing is owned; everything must outlive the call.
struct HtmlReportInput {
  std::string title;  // page title and heading, e.g. the trace file name
  const whatif::WhatIfResult& result;
  const trace::JobMeta& meta;
  const diagnose::Diagnosis& diagnosis;
  const econ::StepCost& cost;  // gpus == 0: no cost lines
  // The worst step's ops, actual vs ideal; null: no timeline section.
  const whatif::Timeline* timeline = nullptr;
  // What was read and what was wrong with it (profiler traces); null: none.
  const InputNotes* input = nullptr;
};

// The timeline shows at most this many workers: those with critical-path
// ops, then the largest straggler's pipeline, then the lowest ranks.
inline constexpr size_t kMaxTimelineWorkers = 48;

// The HTML text (UTF-8). Deterministic: the same input gives the same bytes.
// Cost O(workers + steps + timeline ops) plus the inlined assets (~1.2 MB).
std::string RenderHtmlReport(const HtmlReportInput& in);

// The assets inlined into every report (generated source, see
// cmake/echarts.cmake).
namespace web_assets {
std::string_view EchartsJs();       // echarts.min.js, "</script" escaped
std::string_view EchartsVersion();  // "6.1.0"
std::string_view ReportJs();        // web/report.js
std::string_view ReportCss();       // web/report.css
}  // namespace web_assets

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_HTML_REPORT_H_
