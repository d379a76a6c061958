// SPDX-License-Identifier: Apache-2.0
#include "report/render/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <string_view>
#include <vector>

#include "base/f32.h"
#include "base/json_writer.h"
#include "trace/op_type.h"

#include "base/str_format.h"
#include "report/render/kernel_detail_html.h"
#include "report/render/plan_html.h"
#include "report/render/plan_text.h"

namespace strag::report {
namespace {

using whatif::Decomposition;
using whatif::WhatIfResult;

constexpr size_t kTopWorkers = 20;
constexpr size_t kMaxListedRanks = 8;


// `text` with every byte found in `from` replaced by the same entry of `to`.
std::string ReplaceBytes(std::string_view text, std::string_view from,
                         std::span<const std::string_view> to) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const size_t k = from.find(c);
    if (k == std::string_view::npos) {
      out += c;
    } else {
      out += to[k];
    }
  }
  return out;
}

std::string Escape(std::string_view text) { return HtmlEscape(text); }

// JSON that can sit inside <script>: '<', '>' and '&' only occur in JSON
// strings, where their \u escapes mean the same.
std::string ScriptSafe(std::string_view json) {
  static constexpr std::string_view kTo[] = {"\\u003c", "\\u003e", "\\u0026"};
  return ReplaceBytes(json, "<>&", kTo);
}

// A time in the unit that suits it: "46.73 s", "420.2 ms", "35.0 µs".
std::string TimeText(double seconds) {
  const double a = std::abs(seconds);
  if (a >= 1) return StrFormat(a >= 100 ? "%.1f s" : "%.2f s", seconds);
  if (a >= 1e-3 || a == 0) {
    return StrFormat(a >= 0.1 ? "%.1f ms" : "%.2f ms", 1e3 * seconds);
  }
  return StrFormat("%.1f \u00b5s", 1e6 * seconds);
}

// Seconds to milliseconds, rounded to the microsecond (short JSON numbers).
double Ms(double seconds) { return std::round(seconds * 1e6) / 1e3; }

// The first ranks of a list of `total` (the list may hold only the first).
std::string RankList(const std::vector<int32_t>& ranks, int64_t total) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < kMaxListedRanks; ++i) {
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  if (total > static_cast<int64_t>(kMaxListedRanks)) {
    s += StrFormat(", ... (%lld ranks)", static_cast<long long>(total));
  }
  return s;
}

std::string RankList(const std::vector<int32_t>& ranks) {
  return RankList(ranks, static_cast<int64_t>(ranks.size()));
}

// --- the JSON data blob ---------------------------------------------------

// Profiler traces without a layout: rank x step cells, each "S if only this
// rank were left unfixed" in that step, [step index, rank index, value].
void WriteRankGrid(JsonWriter* w, const WhatIfResult& r) {
  const Decomposition& d = r.by_stage;  // by rank for Layout::kRanks
  w->Key("grid");
  w->BeginObject();
  w->Key("ranks");
  w->BeginArray();
  for (const std::string& k : d.keys) w->String(k);
  w->EndArray();
  w->FieldIntArray("steps", r.steps);
  w->Key("cells");
  w->BeginArray();
  for (size_t k = 0; k < d.per_step.size(); ++k) {
    for (size_t s = 0; s < d.per_step[k].size(); ++s) {
      w->BeginArray();
      w->Int(static_cast<int64_t>(s));
      w->Int(static_cast<int64_t>(k));
      w->Number(d.per_step[k][s]);
      w->EndArray();
    }
  }
  w->EndArray();
  w->EndObject();
}

void WriteHeatmap(JsonWriter* w, const Report& in) {
  const WhatIfResult& r = in.result;
  std::vector<whatif::WorkerScore> cells = r.workers;
  std::sort(cells.begin(), cells.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  w->Key("heatmap");
  w->BeginObject();
  w->FieldInt("dp", r.dp);
  w->FieldInt("pp", r.pp);
  w->FieldInt("straggler", in.diagnosis.largest_straggler.rank);
  w->Key("cells");  // [dp, pp, score, rank]
  w->BeginArray();
  for (const whatif::WorkerScore& c : cells) {
    w->BeginArray();
    w->Int(c.dp);
    w->Int(c.pp);
    w->Number(c.score);
    w->Int(c.rank);
    w->EndArray();
  }
  w->EndArray();
  if (r.layout == whatif::Layout::kRanks) WriteRankGrid(w, r);
  w->EndObject();
}

void WriteSteps(JsonWriter* w, const WhatIfResult& r) {
  w->Key("steps");
  w->BeginObject();
  w->FieldIntArray("step", r.steps);
  w->Key("slowdown");
  w->BeginArray();
  for (double v : r.slowdown_per_step) w->Number(v);
  w->EndArray();
  w->Key("launch_slowdown");
  w->BeginArray();
  for (double v : r.launch_slowdown_per_step) w->Number(v);
  w->EndArray();
  w->EndObject();
}

void WriteDecomposition(JsonWriter* w, std::string_view key,
                        const Decomposition& d) {
  w->Key(key);
  w->BeginObject();
  w->Key("keys");
  w->BeginArray();
  for (const std::string& k : d.keys) w->String(k);
  w->EndArray();
  w->Key("slowdown");
  w->BeginArray();
  for (double v : d.slowdown) w->Number(v);
  w->EndArray();
  w->EndObject();
}

// The workers the timeline shows, at most kMaxTimelineWorkers: the largest
// straggler, then critical-path workers, then the straggler's pipeline (its
// DP replica), then the lowest ranks. Shown with the straggler's rows first,
// the rest by rank.
std::vector<int32_t> TimelineWorkers(const whatif::Timeline& t,
                                     const diagnose::Straggler& straggler) {
  // rank -> 0 straggler, 1 critical, 2 pipeline, 3 rest
  std::map<int32_t, int> priority;
  for (const whatif::TimelineOp& op : t.ops) {
    const int p = op.rank == straggler.rank ? 0
                  : op.on_critical_path     ? 1
                  : op.dp == straggler.dp   ? 2
                                            : 3;
    auto [it, inserted] = priority.emplace(op.rank, p);
    if (!inserted) it->second = std::min(it->second, p);
  }
  std::vector<std::pair<int, int32_t>> order;
  for (const auto& [rank, p] : priority) order.emplace_back(p, rank);
  std::sort(order.begin(), order.end());
  if (order.size() > kMaxTimelineWorkers) order.resize(kMaxTimelineWorkers);
  std::vector<int32_t> ranks;
  for (const auto& [p, rank] : order) ranks.push_back(rank);
  std::sort(ranks.begin(), ranks.end(), [&](int32_t a, int32_t b) {
    return std::pair(a != straggler.rank, a) < std::pair(b != straggler.rank, b);
  });
  return ranks;
}

// Row labels, two per worker (actual, ideal), and the rank -> first row map.
void WriteTimelineRows(JsonWriter* w, const whatif::Timeline& t,
                       const std::vector<int32_t>& ranks, int32_t straggler,
                       std::map<int32_t, int64_t>* row_of) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    (*row_of)[ranks[i]] = static_cast<int64_t>(2 * i);
  }
  std::map<int32_t, std::string> label;
  for (const whatif::TimelineOp& op : t.ops) {
    if (row_of->count(op.rank) && !label.count(op.rank)) {
      label[op.rank] = whatif::WorkerLabel(t.layout, op.rank, op.dp, op.pp) +
                       (op.rank == straggler ? " (straggler)" : "");
    }
  }
  w->Key("rows");
  w->BeginArray();
  for (int32_t rank : ranks) {
    w->String(label[rank] + " actual");
    w->String(label[rank] + " ideal");
  }
  w->EndArray();
}

// One op bar: [row, start_ms, end_ms, type index, critical, microbatch].
void WriteBar(JsonWriter* w, int64_t row, double start_s, double end_s,
              int type, bool critical, int32_t microbatch) {
  w->BeginArray();
  w->Int(row);
  w->Number(Ms(start_s));
  w->Number(Ms(end_s));
  w->Int(type);
  w->Int(critical ? 1 : 0);
  w->Int(microbatch);
  w->EndArray();
}

void WriteTimelineOps(JsonWriter* w, const whatif::Timeline& t,
                      const std::map<int32_t, int64_t>& row_of) {
  std::vector<int> type_index(trace::kNumOpTypes, -1);
  for (const whatif::TimelineOp& op : t.ops) {
    type_index[static_cast<size_t>(op.type)] = 0;
  }
  w->Key("types");  // present op types, in enum order
  w->BeginArray();
  for (int k = 0, n = 0; k < trace::kNumOpTypes; ++k) {
    if (type_index[static_cast<size_t>(k)] < 0) continue;
    type_index[static_cast<size_t>(k)] = n++;
    w->String(trace::OpTypeName(static_cast<trace::OpType>(k)));
  }
  w->EndArray();
  w->Key("ops");
  w->BeginArray();
  for (const whatif::TimelineOp& op : t.ops) {
    auto it = row_of.find(op.rank);
    if (it == row_of.end()) continue;
    const int type = type_index[static_cast<size_t>(op.type)];
    WriteBar(w, it->second, op.start_s, op.end_s, type, op.on_critical_path,
             op.microbatch);
    WriteBar(w, it->second + 1, op.ideal_start_s, op.ideal_end_s, type, false,
             op.microbatch);
  }
  w->EndArray();
}

void WriteTimeline(JsonWriter* w, const Report& in) {
  w->Key("timeline");
  if (!in.slowest_step) {
    w->Null();
    return;
  }
  const whatif::Timeline& t = *in.slowest_step;
  const std::vector<int32_t> ranks =
      TimelineWorkers(t, in.diagnosis.largest_straggler);
  w->BeginObject();
  w->FieldInt("step", t.step);
  w->Field("step_ms", Ms(t.step_time_s));
  w->Field("ideal_step_ms", Ms(t.ideal_step_time_s));
  std::map<int32_t, int64_t> row_of;
  WriteTimelineRows(w, t, ranks, in.diagnosis.largest_straggler.rank,
                    &row_of);
  WriteTimelineOps(w, t, row_of);
  w->EndObject();
}

std::string DataJson(const Report& in) {
  const WhatIfResult& r = in.result;
  JsonWriter w(/*indent=*/0);
  w.BeginObject();
  w.FieldString("schema", "strag.html/1");
  w.FieldString("layout",
                whatif::LayoutName(r.layout));
  w.Field("slowdown", r.slowdown);
  WriteHeatmap(&w, in);
  WriteSteps(&w, r);
  WriteDecomposition(&w, "by_optype", r.by_optype);
  WriteDecomposition(&w, "by_stage", r.by_stage);
  WriteTimeline(&w, in);
  w.EndObject();
  return ScriptSafe(w.str());
}

// --- the HTML text ----------------------------------------------------------

void Item(std::string* out, std::string_view term, const std::string& value) {
  *out += "<dt>" + Escape(term) + "</dt><dd>" + Escape(value) + "</dd>\n";
}

double Utilization(const Report& in) {
  if (in.cost.utilization > 0) return in.cost.utilization;
  const double observed = PairwiseMean(in.result.step_t_observed);
  return observed > 0 ? PairwiseMean(in.result.step_t_ideal) / observed : 0;
}

void OnCallItems(std::string* out, const Report& in) {
  const diagnose::Diagnosis& d = in.diagnosis;
  const diagnose::Straggler& s = d.largest_straggler;
  Item(out, "job utilization", StrFormat("%.1f%%", 100 * Utilization(in)));
  Item(out, "dominant cause", d.dominant_cause);
  const std::string node = s.host.empty() ? StrFormat("node %d", s.node)
                                          : "host " + s.host;
  Item(out, "largest straggler",
       s.rank < 0 ? std::string("none")
       : in.result.layout == whatif::Layout::kRanks
           ? StrFormat("global rank %d (%s)", s.rank, node.c_str())
           : StrFormat("global rank %d (DP %d, PP stage %d, TP %d, %s)",
                       s.rank, s.dp, s.pp, s.tp, node.c_str()));
  Item(out, "scope", d.scope);
  Item(out, "excess step time",
       StrFormat("%+.1f ms (%.0f%% blocking, %.0f%% launch delay)",
              d.excess_step_time_ms, 100 * d.blocking_share,
              100 * (1 - d.blocking_share)));
  Item(out, "persistence",
       StrFormat("P90 of per-step S/S %.3f (%s); %s slowest in %.0f%% of "
                 "steps",
                 d.persistence_p90, diagnose::PersistenceWord(d),
                 in.result.layout == whatif::Layout::kRanks ? "the rank"
                                                            : "its DP replica",
                 100 * d.worst_worker_share));
  Item(out, "probable cause",
       StrFormat("%s (lost time: %.0f%% compute, %.0f%% communication)",
              std::string(diagnose::CauseName(d.probable_cause)).c_str(),
              100 * d.compute_share, 100 * d.communication_share));
}

void MetricItems(std::string* out, const Report& in) {
  const WhatIfResult& r = in.result;
  const char* device = DeviceWord(in);
  Item(out, "slowdown S",
       StrFormat("%.4f (waste %.1f%% of the %s time, 1 - 1/S)", r.slowdown,
                 100 * r.waste, device));
  Item(out, "launch slowdown",
       StrFormat("%.4f (observed step vs replay without launch delays)",
              r.launch_slowdown));
  Item(out, "M_W",
       StrFormat("%.3f (fix only the worst workers: %s)", r.fix_worst_workers.rem,
              RankList(r.fix_worst_workers.ranks).c_str()));
  if (r.layout == whatif::Layout::kMegatron && r.pp > 1) {
    Item(out, "M_S",
         StrFormat("%.3f (fix only the last stage)", r.fix_last_stage.rem));
  }
  if (in.cost.gpus > 0) {
    const econ::StepCost& c = in.cost;
    const bool cpu = std::string_view(device) == "CPU";
    Item(out, "cost",
         StrFormat("%.1f %s-seconds lost per step on %lld %s",
                   c.lost_gpu_seconds_per_step, device,
                   static_cast<long long>(c.gpus), cpu ? "ranks" : "GPUs") +
             (!cpu || c.usd_per_gpu_hour > 0
                  ? StrFormat(": $%.0f per hour at $%.2f per %s-hour",
                              c.wasted_usd_per_hour, c.usd_per_gpu_hour, device)
                  : std::string(" (no price for CPU time)")));
  }
  if (in.diagnosis.worst_step >= 0) {
    Item(out, "worst step", std::to_string(in.diagnosis.worst_step));
  }
}

void Summary(std::string* out, const Report& in) {
  *out +=
      "<h2 id=\"summary\">On-call summary</h2>\n<dl class=\"oncall\" "
      "id=\"oncall\">\n";
  OnCallItems(out, in);
  MetricItems(out, in);
  *out +=
      "</dl>\n";
  const std::string next = in.plan ? NextStep(*in.plan, DeviceWord(in)) : "";
  *out += next.empty()
              ? "<p class=\"note\">Next: <code>strag plan</code> (or "
                "<code>--plan</code>) prices every fix of the playbook on this "
                "job: balance the work, backups, drop or async, replace a "
                "node.</p>\n"
              : "<p class=\"note\" id=\"next\">Next: " + Escape(next) +
                    " (<a href=\"#plan\">plan</a>).</p>\n";
}

void Findings(std::string* out, const diagnose::Diagnosis& d) {
  *out += "<h2>Findings</h2>\n";
  if (d.findings.empty()) {
    *out += "<p class=\"note\">No findings.</p>\n";
    return;
  }
  *out +=
      "<table id=\"findings\">\n<tr><th>#</th><th>cause</th><th "
      "class=\"num\">confidence</th><th>ranks</th><th>evidence</th></tr>\n";
  for (size_t k = 0; k < d.findings.size(); ++k) {
    const diagnose::Finding& f = d.findings[k];
    *out += StrFormat("<tr><td>%zu</td><td>", k + 1) +
            Escape(diagnose::CauseName(f.cause)) +
            StrFormat("</td><td class=\"num\">%.2f</td><td>", f.confidence) +
            Escape(RankList(f.ranks)) + "</td><td>" + Escape(f.evidence) +
            "</td></tr>\n";
  }
  *out += "</table>\n";
}

void RankedWorkers(std::string* out, const WhatIfResult& r) {
  // Without a layout (profiler traces) a worker is a rank: no DP / stage.
  const bool ranks = r.layout == whatif::Layout::kRanks;
  *out += StrFormat(
      "<h2>Ranked workers</h2>\n<p class=\"note\">The %zu slowest of %zu: "
      "%s.</p>\n",
      std::min(kTopWorkers, r.workers.size()), r.workers.size(),
      ranks ? "S if only this rank were left unfixed"
            : "min of their DP rank's and their stage's S (published); "
              "exact: S if only this worker were left unfixed");
  *out += std::string("<table id=\"workers\">\n<tr><th class=\"num\">#</th>") +
          "<th class=\"num\">rank</th>" +
          (ranks ? "" : "<th class=\"num\">DP rank</th><th class=\"num\">stage</th>") +
          "<th class=\"num\">slowdown</th><th class=\"num\">waste</th>" +
          (ranks ? "" : "<th class=\"num\">exact</th>") + "</tr>\n";
  for (size_t k = 0; k < r.workers.size() && k < kTopWorkers; ++k) {
    const whatif::WorkerScore& w = r.workers[k];
    *out += StrFormat("<tr><td class=\"num\">%zu</td><td class=\"num\">%d</td>",
                      k + 1, w.rank);
    if (!ranks) {
      *out += StrFormat("<td class=\"num\">%d</td><td class=\"num\">%d</td>",
                        w.dp, w.pp);
    }
    *out += StrFormat(
        "<td class=\"num\">%.3f</td><td class=\"num\">%.1f%%</td>",
        w.score, w.score > 0 ? 100 * (1 - 1 / w.score) : 0.0);
    if (!ranks) {
      *out += StrFormat("<td class=\"num\">%.3f</td>", w.unfix_slowdown);
    }
    *out += "</tr>\n";
  }
  *out += "</table>\n";
}

void Charts(std::string* out, const WhatIfResult& r) {
  const bool ranks = r.layout == whatif::Layout::kRanks;
  const int heatmap_px = std::clamp(r.pp * 22 + 110, 180, 740);
  *out += StrFormat(
      "<h2>Worker slowdown</h2>\n<p class=\"note\">%s; values in the cells, "
      "the largest straggler outlined, darker is slower.</p>\n"
      "<p class=\"note\" id=\"heatmap-scale\">Colour scale: "
      "<button type=\"button\" class=\"on\" data-scale=\"job\">this "
      "job's range</button> <button type=\"button\" data-scale=\"smon\">"
      "1.0 to 1.5 (SMon)</button></p>\n"
      "<div id=\"chart-heatmap\" class=\"chart\" style=\"height:%dpx\">"
      "</div>\n",
      ranks ? "rank x step (the traces do not give the layout): S if only "
              "this rank were left unfixed, per step"
            : "DP rank x PP stage: min of the DP rank's and the stage's S",
      heatmap_px);
  *out +=
      "<h2>Slowdown per step</h2>\n<div id=\"chart-steps\" "
      "class=\"chart\"></div>\n";
  *out +=
      "<div class=\"row\">\n<section><h2>By op type</h2>\n<p "
      "class=\"note\">S if only this op type were left unfixed.</p>\n<div "
      "id=\"chart-optype\" class=\"chart\"></div></section>\n"
      "<section><h2>By " + std::string(ranks ? "rank" : "stage") +
      "</h2>\n<p class=\"note\">S if only this " +
      std::string(ranks ? "rank" : "stage") +
      " were left unfixed.</p>\n<div id=\"chart-stage\" class=\"chart\">"
      "</div></section>\n</div>\n";
}

void TimelineSection(std::string* out, const Report& in) {
  if (!in.slowest_step) return;
  const whatif::Timeline& t = *in.slowest_step;
  std::set<int32_t> workers;
  for (const whatif::TimelineOp& op : t.ops) workers.insert(op.rank);
  *out += StrFormat(
      "<h2>Worst step timeline</h2>\n<p class=\"note\">Step %lld: %s "
      "replayed without launch delays (actual) against %s with ideal "
      "durations; %zu of %zu workers (the largest straggler first, then the "
      "critical path), critical-path ops outlined.</p>\n<div "
      "id=\"timeline-legend\"></div>\n<div id=\"chart-timeline\" "
      "class=\"chart\"></div>\n",
      static_cast<long long>(t.step), TimeText(t.step_time_s).c_str(),
      TimeText(t.ideal_step_time_s).c_str(),
      std::min(kMaxTimelineWorkers, workers.size()), workers.size());
}

void Head(std::string* out, const Report& in) {
  *out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
      "charset=\"utf-8\">\n<meta name=\"viewport\" "
      "content=\"width=device-width, initial-scale=1\">\n";
  *out += "<meta name=\"generator\" content=\"strag; ECharts " +
          Escape(web_assets::EchartsVersion()) + "\">\n";
  *out += "<title>strag: " + Escape(in.source) + "</title>\n<style>\n";
  *out += web_assets::ReportCss();
  *out += "</style>\n</head>\n<body>\n";
}

void Heading(std::string* out, const Report& in) {
  const WhatIfResult& r = in.result;
  *out += "<h1>strag report: " + Escape(in.source) + "</h1>\n";
  if (r.layout == whatif::Layout::kRanks) {
    *out += StrFormat(
        "<p class=\"sub\" id=\"job\">Job: %zu traced ranks of %lld (layout "
        "not in the traces), %zu steps, %zu ops.</p>\n",
        r.workers.size(),
        static_cast<long long>(whatif::WorldSize(r, in.meta)),
        r.steps.size(), r.num_ops);
    return;
  }
  *out += StrFormat(
      "<p class=\"sub\" id=\"job\">Job: DP %d x PP %d x TP %d x CP %d (VPP "
      "%d), %zu traced workers, %zu steps, %zu ops.</p>\n",
      r.dp, r.pp, in.meta.tp, in.meta.cp, r.vpp, r.workers.size(),
      r.steps.size(), r.num_ops);
}

void Scripts(std::string* out, const Report& in) {
  *out += "<footer>Made by strag; charts by Apache ECharts " +
          Escape(web_assets::EchartsVersion()) +
          " (Apache-2.0), inlined: this file works offline.</footer>\n";
  *out += "<script type=\"application/json\" id=\"strag-data\">";
  *out += DataJson(in);
  *out += "</script>\n<script>\n";
  *out += web_assets::EchartsJs();
  *out += "\n</script>\n<script>\n";
  *out += web_assets::ReportJs();
  *out += "</script>\n</body>\n</html>\n";
}

// Profiler traces: files, missing ranks, clock alignment, skipped events
// and every warning, so that the numbers above can be judged.
void InputSection(std::string* out, const InputNotes& in) {
  *out += "<h2>Input</h2>\n<dl class=\"oncall\" id=\"input\">\n";
  Item(out, "files", StrFormat("%lld %s trace file(s), %lld events, world of "
                               "%d ranks",
                               static_cast<long long>(in.files),
                               in.format.c_str(),
                               static_cast<long long>(in.events),
                               in.world_size));
  if (!in.missing_ranks.empty()) {
    Item(out, "missing ranks",
         RankList(in.missing_ranks, in.missing_rank_count));
  }
  if (!in.clock.offset_ns.empty()) {
    Item(out, "clocks",
         StrFormat("aligned on %lld collectives, offsets up to %s, "
                   "residual max %s (p99 %s)",
                   static_cast<long long>(in.clock.collectives),
                   TimeText(1e-9 * static_cast<double>(
                                       in.clock.max_abs_offset_ns))
                       .c_str(),
                   TimeText(1e-6 * in.clock.residual_max_us).c_str(),
                   TimeText(1e-6 * in.clock.residual_p99_us).c_str()));
  }
  for (const auto& [why, n] : in.skipped) {
    Item(out, "skipped", StrFormat("%lld: ", static_cast<long long>(n)) + why);
  }
  *out += "</dl>\n";
  if (in.warnings.empty()) return;
  *out += "<ul id=\"warnings\">\n";
  for (const std::string& w : in.warnings) {
    *out += "<li>" + Escape(w) + "</li>\n";
  }
  *out += "</ul>\n";
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  static constexpr std::string_view kTo[] = {"&amp;", "&lt;", "&gt;", "&quot;",
                                             "&#39;"};
  return ReplaceBytes(text, "&<>\"'", kTo);
}

std::string RenderHtmlReport(const Report& in) {
  std::string out;
  out.reserve(web_assets::EchartsJs().size() + (1 << 16));
  Head(&out, in);
  Heading(&out, in);
  Summary(&out, in);
  if (in.notes) InputSection(&out, *in.notes);
  Findings(&out, in.diagnosis);
  out += KernelDetailHtmlSection(in.kernel_detail);
  Charts(&out, in.result);
  RankedWorkers(&out, in.result);
  if (in.plan) out += PlanHtmlSection(*in.plan, DeviceWord(in));
  TimelineSection(&out, in);
  Scripts(&out, in);
  return out;
}

}  // namespace strag::report
