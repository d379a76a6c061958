// SPDX-License-Identifier: Apache-2.0
#include "report/render/plan_html.h"

#include "base/str_format.h"
#include "report/render/html_report.h"
#include "report/render/plan_text.h"
#include "report/render/text_units.h"

namespace strag::report {

std::string PlanHtmlSection(const mitigate::Plan& p, const char* device) {
  if (!p.withheld.empty()) {
    return "<h2 id=\"plan\">Plan</h2>\n<p class=\"note\">Plan withheld: " +
           HtmlEscape(p.withheld) + "</p>\n";
  }
  std::string out = StrFormat(
      "<h2 id=\"plan\">Plan</h2>\n<p class=\"note\">Each fix replayed on the "
      "job's own dependency graph: step now %s (ideal %s, S %.3f); %s over "
      "%.0f hours; net of restarts and extra devices. A gain under %s is "
      "within noise.</p>\n",
      Duration(p.step_s).c_str(), Duration(p.ideal_s).c_str(), p.slowdown,
      HtmlEscape(PlanFleet(p, device)).c_str(), p.horizon_hours,
      Duration(p.band_s).c_str());
  out +=
      "<table id=\"plan-table\">\n<tr><th class=\"num\">#</th><th>fix</th>"
      "<th>action</th><th class=\"num\">step after</th><th class=\"num\">S "
      "after</th><th class=\"num\">recovers</th><th class=\"num\">net " +
      std::string(device) +
      "-h</th><th class=\"num\">net $</th><th>side effects</th></tr>\n";
  size_t rank = 0;
  for (const mitigate::PlanRow& r : p.rows) {
    const std::string place = r.within_noise ? "noise" : std::to_string(++rank);
    std::string effects = r.effects.restart ? "restart" : "no restart";
    if (r.effects.extra_gpus > 0) {
      effects += StrFormat(", %lld extra GPUs",
                           static_cast<long long>(r.effects.extra_gpus));
    }
    effects += ", semantics " +
               std::string(mitigate::SemanticsName(r.effects.semantics));
    if (!r.effects.caveat.empty()) effects += "; " + r.effects.caveat;
    out += "<tr data-policy=\"" + HtmlEscape(r.policy) +
           "\"><td class=\"num\">" + place + "</td><td>" +
           HtmlEscape(r.policy) + (r.bound ? " (bound)" : "") + "</td><td>" +
           HtmlEscape(r.action) + "<br><span class=\"note\">" +
           HtmlEscape(r.evidence) + "</span></td>" +
           StrFormat(
               "<td class=\"num\">%s</td><td class=\"num\">%.3f</td>"
               "<td class=\"num\">%.0f%%</td><td class=\"num\">%+.0f</td>"
               "<td class=\"num\">%.0f</td>",
               Duration(r.step_s).c_str(), r.slowdown_after, 100 * r.recovered,
               r.net_gpu_hours, r.net_usd) +
           "<td>" + HtmlEscape(effects) + "</td></tr>\n";
  }
  out += "</table>\n";
  if (!p.skipped.empty()) {
    out += "<ul id=\"plan-skipped\">\n";
    for (const mitigate::SkippedPolicy& s : p.skipped) {
      out += "<li>" + HtmlEscape(s.policy) + ": " + HtmlEscape(s.reason) +
             "</li>\n";
    }
    out += "</ul>\n";
  }
  return out;
}

}  // namespace strag::report
