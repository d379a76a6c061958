// SPDX-License-Identifier: Apache-2.0
// The HTML report: one file with the data blob, the inlined ECharts and the
// report template; all text escaped; byte-identical for the same input. That
// it renders in a browser is tests/html/html_report_test.py.

#include "report/render/html_report.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "report/inputs.h"
#include "report/report.h"
#include "sim/synth_test_util.h"
#include "sim/trace_synth.h"

namespace strag::report {
namespace {

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The text of <script id="strag-data">.
std::string DataBlob(const std::string& html) {
  const std::string open =
      "<script type=\"application/json\" id=\"strag-data\">";
  const size_t begin = html.find(open);
  EXPECT_NE(begin, std::string::npos);
  if (begin == std::string::npos) return "";
  const size_t end = html.find("</script>", begin);
  return html.substr(begin + open.size(), end - begin - open.size());
}

// A real analysed job: DP 4 x PP 2, 4 microbatches, 6 steps; the worker at
// DP rank 1 of stage 1 computes 30% slower.
struct Job {
  Report report;

  Job() {
    const sim::SynthJob spec{
        .dp = 4, .pp = 2, .microbatches = 4, .steps = {0, 1, 2, 3, 4, 5}};
    auto table = sim::SynthesizeTrace(spec, [](const sim::SynthOp& op) {
      const double slow = op.dp == 1 && op.stage == 1 ? 1.3 : 1.0;
      if (op.type == trace::OpType::kForwardCompute) return 0.010 * slow;
      if (op.type == trace::OpType::kBackwardCompute) return 0.020 * slow;
      return 0.001;
    });
    EXPECT_TRUE(table.ok()) << table.status().message();
    auto in = OpsTableInput(*table, {}, "demo job");
    EXPECT_TRUE(in.ok()) << in.status().message();
    auto r = BuildReport(std::move(*in), {.gpus = 8});
    EXPECT_TRUE(r.ok()) << r.status().message();
    report = std::move(*r);
  }

  Report Input(std::string title, bool with_timeline = true) const {
    Report copy = report;
    copy.source = std::move(title);
    if (!with_timeline) copy.slowest_step.reset();
    return copy;
  }
};

const Job& SharedJob() {
  static const Job* job = new Job();
  return *job;
}

TEST(HtmlReportTest, OneFileWithDataEchartsAndTemplate) {
  const std::string html = RenderHtmlReport(SharedJob().Input("demo job"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_GT(web_assets::EchartsJs().size(), 500'000u);
  EXPECT_NE(html.find(web_assets::EchartsJs()), std::string::npos);
  EXPECT_NE(html.find(web_assets::ReportJs()), std::string::npos);
  EXPECT_NE(html.find(web_assets::ReportCss()), std::string::npos);
  EXPECT_NE(web_assets::EchartsJs().find(web_assets::EchartsVersion()),
            std::string_view::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // works offline
  for (const char* id :
       {"chart-heatmap", "chart-steps", "chart-optype", "chart-stage",
        "chart-timeline", "oncall", "findings", "workers"}) {
    EXPECT_NE(html.find("id=\"" + std::string(id) + "\""), std::string::npos)
        << id;
  }
  EXPECT_NE(html.find("job utilization"), std::string::npos);
  EXPECT_NE(html.find("probable cause"), std::string::npos);
}

TEST(HtmlReportTest, DataBlobHoldsTheChartsData) {
  const Job& job = SharedJob();
  const std::string blob = DataBlob(RenderHtmlReport(job.Input("demo job")));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(blob).get(doc), simdjson::SUCCESS) << blob;
  EXPECT_EQ(std::string_view(doc["schema"].get_string()), "strag.html/1");
  EXPECT_EQ(int64_t(doc["heatmap"]["dp"]), 4);
  EXPECT_EQ(int64_t(doc["heatmap"]["pp"]), 2);
  EXPECT_EQ(doc["heatmap"]["cells"].get_array().size(), 8u);
  EXPECT_EQ(doc["steps"]["slowdown"].get_array().size(), 6u);
  EXPECT_EQ(doc["by_stage"]["keys"].get_array().size(), 2u);
  EXPECT_GT(doc["by_optype"]["keys"].get_array().size(), 1u);
  simdjson::dom::element t = doc["timeline"];
  EXPECT_EQ(t["rows"].get_array().size(), 16u);  // two rows per worker
  EXPECT_EQ(t["ops"].get_array().size(), 2 * job.report.slowest_step->ops.size());
  EXPECT_GT(double(t["step_ms"]), double(t["ideal_step_ms"]));
}

TEST(HtmlReportTest, EscapesAllText) {
  Job job = SharedJob();
  job.report.diagnosis.scope = "<img src=x onerror=alert(1)>";
  diagnose::Finding finding;
  finding.evidence = "a </script><script>alert(2)</script> & \"b\"";
  job.report.diagnosis.findings.push_back(finding);
  std::string html = RenderHtmlReport(job.Input("<b>'title'</b> & \"more\""));
  // ECharts' own code has "<img" in strings; check strag's part of the file.
  const size_t echarts = html.find(web_assets::EchartsJs());
  ASSERT_NE(echarts, std::string::npos);
  EXPECT_EQ(Lower(web_assets::EchartsJs()).find("</script"), std::string::npos);
  html.erase(echarts, web_assets::EchartsJs().size());
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("alert(2)</script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;&#39;title&#39;&lt;/b&gt; &amp; &quot;more"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  // Three script elements, each closed once: nothing inlined closes one.
  EXPECT_EQ(Count(Lower(html), "<script"), 3u);
  EXPECT_EQ(Count(Lower(html), "</script"), 3u);
  EXPECT_EQ(DataBlob(html).find_first_of("<>&"), std::string::npos);
}

TEST(HtmlReportTest, Deterministic) {
  const std::string a = RenderHtmlReport(SharedJob().Input("demo job"));
  const Job fresh;  // the same job analysed again
  EXPECT_EQ(a, RenderHtmlReport(fresh.Input("demo job")));
}

TEST(HtmlReportTest, WithoutTimeline) {
  const std::string html =
      RenderHtmlReport(SharedJob().Input("demo job", /*with_timeline=*/false));
  EXPECT_EQ(html.find("id=\"chart-timeline\""), std::string::npos);
  EXPECT_NE(DataBlob(html).find("\"timeline\":null"), std::string::npos);
}

// A large step keeps the critical-path workers and caps the rows.
TEST(HtmlReportTest, TimelineShowsCriticalWorkersFirst) {
  Job job = SharedJob();
  whatif::Timeline big;
  big.step_time_s = 0.01;
  big.ideal_step_time_s = 0.008;
  for (int32_t rank = 0; rank < 100; ++rank) {
    whatif::TimelineOp op;
    op.rank = rank;
    op.dp = rank;
    op.type = trace::OpType::kForwardCompute;
    op.end_s = 0.01;
    op.ideal_end_s = 0.008;
    op.on_critical_path = rank == 97;
    big.ops.push_back(op);
  }
  Report in = job.Input("big");
  in.slowest_step = big;
  const std::string blob = DataBlob(RenderHtmlReport(in));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(blob).get(doc), simdjson::SUCCESS);
  simdjson::dom::array rows = doc["timeline"]["rows"];
  EXPECT_EQ(rows.size(), 2 * kMaxTimelineWorkers);
  EXPECT_NE(blob.find("\"rank 97 (dp 97, stage 0) actual\""),
            std::string::npos);
  EXPECT_EQ(blob.find("\"rank 98 "), std::string::npos);
}

}  // namespace
}  // namespace strag::report
