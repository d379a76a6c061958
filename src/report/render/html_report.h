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

#include "report/report.h"

namespace strag::report {

// Workers shown in the timeline section (the straggler's DP replica first).
inline constexpr size_t kMaxTimelineWorkers = 48;

// The page's title and heading are the report's source; the timeline
// section shows its slowest step (none without). The HTML text (UTF-8). Deterministic: the same input gives the same bytes.
// Cost O(workers + steps + timeline ops) plus the inlined assets (~1.2 MB).
std::string RenderHtmlReport(const Report& report);

// Text for an HTML element or a quoted attribute.
std::string HtmlEscape(std::string_view text);

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
