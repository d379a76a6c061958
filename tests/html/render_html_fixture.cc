// SPDX-License-Identifier: Apache-2.0
// Writes the HTML report of a small synthesised job, analysed end to end
// (what-if analysis, diagnosis, cost, the worst step's timeline), for the
// browser test html_report_test.py.
//
// usage: render_html_fixture OUT.html [TITLE]
//
// The job: DP 8 x PP 4, 8 microbatches, 12 steps; the worker at DP rank 3 of
// stage 2 computes 25% slower, and every step a different DP rank of stage 0
// computes 10% slower (transient noise).

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "base/status.h"
#include "report/inputs.h"
#include "report/render/html_report.h"
#include "report/report.h"
#include "sim/trace_synth.h"

namespace strag {
namespace {

double Cost(const sim::SynthOp& op) {
  double slow = 1.0;
  if (op.dp == 3 && op.stage == 2) slow = 1.25;
  if (op.stage == 0 && op.dp == op.step % 8) slow = 1.10;
  switch (op.type) {
    case trace::OpType::kForwardCompute:
      return 0.008 * slow;
    case trace::OpType::kBackwardCompute:
      return 0.016 * slow;
    case trace::OpType::kOptimizer:
      return 0.004;
    default:
      return 0.0005;
  }
}

Status Run(const std::string& path, const std::string& title) {
  sim::SynthJob spec{.dp = 8, .pp = 4, .microbatches = 8};
  spec.steps.clear();
  for (int64_t s = 0; s < 12; ++s) spec.steps.push_back(s);
  ASSIGN_OR_RETURN(trace::OpsTable table, sim::SynthesizeTrace(spec, Cost));
  ASSIGN_OR_RETURN(report::ReportInput in,
                   report::OpsTableInput(table, {}, title));
  ASSIGN_OR_RETURN(const report::Report report,
                   report::BuildReport(std::move(in), {.gpus = 32}));
  const std::string html = report::RenderHtmlReport(report);
  std::ofstream out(path, std::ios::binary);
  out << html;
  out.close();
  if (!out) return NotFound("cannot write " + path);
  return Status::Ok();
}

}  // namespace
}  // namespace strag

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: render_html_fixture OUT.html [TITLE]\n");
    return 2;
  }
  const strag::Status status =
      strag::Run(argv[1], argc > 2 ? argv[2] : "synthesised job");
  if (!status.ok()) {
    std::fprintf(stderr, "render_html_fixture: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
