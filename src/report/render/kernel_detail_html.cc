// SPDX-License-Identifier: Apache-2.0
#include "report/render/kernel_detail_html.h"

#include <algorithm>

#include "base/str_format.h"
#include "report/render/html_report.h"
#include "report/render/text_units.h"

namespace strag::report {
namespace {

// Rows per rank's table (the largest excesses; the JSON has them all).
constexpr size_t kRowsPerRank = 12;

// Rows that sum a name over all the rank's compute segments.
constexpr size_t kAllSegmentRows = 3;

struct Row {
  int32_t segment;  // -1: all segments
  const OpExcess* op;
};

// Kernel names in a CPU op's cell.
constexpr size_t kKernelsListed = 3;

// Rows of CPU ops with their kernels where the trace names them (`by_op`),
// else of names.
std::vector<Row> TopRows(const KernelDetail& d, bool by_op) {
  const std::vector<OpExcess>& ops = by_op ? d.launch_ops : d.ops;
  std::vector<Row> rows;
  for (size_t k = 0; k < ops.size() && k < kAllSegmentRows; ++k) {
    rows.push_back({-1, &ops[k]});
  }
  const size_t all = rows.size();
  for (const SegmentExcess& s : d.segments) {
    for (const OpExcess& op : by_op ? s.launch_ops : s.ops) {
      rows.push_back({s.segment, &op});
    }
  }
  std::stable_sort(rows.begin() + static_cast<ptrdiff_t>(all), rows.end(),
                   [](const Row& a, const Row& b) {
                     return a.op->excess_s > b.op->excess_s;
                   });
  if (rows.size() > all + kRowsPerRank) rows.resize(all + kRowsPerRank);
  return rows;
}

std::string StepList(const std::vector<int64_t>& steps) {
  std::string out;
  for (int64_t s : steps) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

// The CPU op and kernels cells of a launch_ops row: a CPU op and its top
// kernels with their counts, or "(none)" and the kernel launched outside
// any CPU op.
std::string LaunchCells(const OpExcess& op) {
  if (op.kernels.empty()) {
    return "<td>(none)</td><td>" + HtmlEscape(op.name) + "</td>";
  }
  std::string kernels;
  for (size_t k = 0; k < op.kernels.size() && k < kKernelsListed; ++k) {
    kernels +=
        (k == 0 ? "" : "<br>") + HtmlEscape(op.kernels[k].name) +
        StrFormat(" &times;%lld", static_cast<long long>(op.kernels[k].count));
  }
  if (op.kernels.size() > kKernelsListed) {
    kernels += StrFormat("<br>%zu more", op.kernels.size() - kKernelsListed);
  }
  return "<td>" + HtmlEscape(op.name) + "</td><td>" + kernels + "</td>";
}

void RankTable(std::string* out, const KernelDetail& d) {
  const bool by_op = !d.launch_ops.empty();
  *out += StrFormat(
      "<h3>Rank %d</h3>\n<p class=\"note\">%s of its compute segments in "
      "step(s) %s against rank %d, the median of its %d stage peer(s): "
      "compute %s%s.</p>\n",
      d.rank,
      d.cpu_ops ? "CPU ops"
      : by_op   ? "GPU kernels, by the CPU op that launched them,"
                : "GPU kernels",
      StepList(d.steps).c_str(), d.median_rank, d.peers,
      d.excess_s >= 0 ? "+" : "", Duration(d.excess_s).c_str());
  *out += StrFormat(
      "<table class=\"kernel-detail\" id=\"kernel-detail-%d\">\n<tr>"
      "<th>segment</th><th>%s</th><th class=\"num\">count</th><th "
      "class=\"num\">total</th><th class=\"num\">on rank %d</th><th "
      "class=\"num\">excess</th><th class=\"num\">ratio</th></tr>\n",
      d.rank,
      d.cpu_ops ? "op"
      : by_op   ? "CPU op</th><th>kernels"
                : "kernel",
      d.median_rank);
  for (const Row& row : TopRows(d, by_op)) {
    const OpExcess& op = *row.op;
    *out +=
        (row.segment < 0 ? std::string("<tr><td>all compute</td>")
                         : StrFormat("<tr><td>compute #%d</td>", row.segment)) +
        (by_op ? LaunchCells(op) : "<td>" + HtmlEscape(op.name) + "</td>") +
        StrFormat(
            "<td class=\"num\">%lld</td><td class=\"num\">%s"
            "</td><td class=\"num\">%s</td><td class=\"num\">%s%s"
            "</td><td class=\"num\">%s</td></tr>\n",
            static_cast<long long>(op.count), Duration(op.total_s).c_str(),
            Duration(op.median_total_s).c_str(), op.excess_s >= 0 ? "+" : "",
            Duration(op.excess_s).c_str(),
            op.ratio > 0             ? StrFormat("%.2fx", op.ratio).c_str()
            : op.median_count == 0   ? "new"
            : op.count == 0          ? "none here"
                                     : "-");
  }
  *out += "</table>\n";
}

}  // namespace

std::string KernelDetailHtmlSection(const std::vector<KernelDetail>& detail) {
  if (detail.empty()) return "";
  std::string out =
      "<h2 id=\"kernel-detail\">Why the stragglers are slow</h2>\n<p "
      "class=\"note\">Per named straggler: the ops of its compute segments "
      "with the largest excess over the same segments on its stage's median "
      "rank, in its worst steps (all of them in --json).</p>\n";
  for (const KernelDetail& d : detail) RankTable(&out, d);
  return out;
}

}  // namespace strag::report
