// SPDX-License-Identifier: Apache-2.0
#include "serve/live_json.h"

#include "base/json_writer.h"
#include "base/str_format.h"
#include "report/render/oncall_text.h"

namespace strag::serve {
namespace {

namespace online = diagnose::online;

double WastedGpuHours(const JobMonitor::Snapshot& s) {
  return s.view.wasted_s * static_cast<double>(s.gpus) / 3600.0;
}

double BurnUsdPerHour(const JobMonitor::Snapshot& s) {
  return (1 - s.view.utilization) * static_cast<double>(s.gpus) *
         s.usd_per_gpu_hour;
}

void AlertObject(JsonWriter& w, const online::AlertEvent& a) {
  w.BeginObject();
  w.FieldInt("id", a.id);
  w.FieldString("name", online::AlertNameText(a.name));
  w.Key("firing");
  w.Bool(a.firing);
  w.FieldString("cause", diagnose::CauseName(a.cause));
  w.FieldIntArray("ranks", a.ranks);
  w.FieldString("scope", a.scope);
  w.FieldInt("step", a.step);
  w.Field("t_s", static_cast<double>(a.t_ns) * 1e-9);
  w.Field("excess_ratio", a.excess_ratio);
  w.FieldString("summary", a.summary);
  w.EndObject();
}

void CaptureObject(JsonWriter& w, const CaptureOrder& c) {
  w.BeginObject();
  w.FieldString("id", c.id);
  w.FieldInt("alert", c.alert_id);
  w.FieldIntArray("ranks", c.ranks);
  w.FieldInt("start_step", c.start_step);
  w.FieldInt("steps", c.steps);
  w.FieldString("state", c.state);
  w.FieldIntArray("uploaded", c.uploaded);
  w.FieldString("summary", c.summary);
  w.EndObject();
}

void SuspectObject(JsonWriter& w, const online::Suspect& t) {
  w.BeginObject();
  w.FieldInt("rank", t.place.rank);
  w.FieldInt("dp", t.place.dp);
  w.FieldInt("pp", t.place.pp);
  w.FieldInt("tp", t.place.tp);
  w.FieldInt("node", t.place.node);
  w.Field("lateness_ms", t.lateness_ns * 1e-6);
  w.Field("excess_ratio", t.excess_ratio);
  w.Field("persistence", t.persistence);
  w.Field("z", t.z);
  w.FieldString("cause", diagnose::CauseName(t.cause));
  w.Field("coverage", t.coverage);
  w.FieldInt("since_step", t.since_step);
  w.EndObject();
}

void Floats(JsonWriter& w, std::string_view key, const std::vector<float>& v) {
  w.Key(key);
  w.BeginArray();
  for (float x : v) w.Number(static_cast<double>(x));
  w.EndArray();
}

}  // namespace

std::string OnCallText(const JobMonitor::Snapshot& s) {
  const diagnose::Diagnosis& d = s.view.diagnosis;
  std::string out = report::OnCallLead(d, s.view.utilization, true, "", false);
  out += StrFormat("excess step time %+.1f ms; persistence: %.0f%% of recent "
                   "steps (%s)\n",
                   d.excess_step_time_ms, 100 * d.worst_worker_share,
                   diagnose::PersistenceWord(d));
  out += "probable cause: " + std::string(diagnose::CauseName(d.probable_cause)) +
         "\n";
  out += StrFormat(
      "lost: %.2f GPU-hours, $%.2f since the start; burning $%.2f per hour "
      "(%lld GPUs at $%.2f per GPU-hour)\n",
      WastedGpuHours(s), WastedGpuHours(s) * s.usd_per_gpu_hour,
      BurnUsdPerHour(s), static_cast<long long>(s.gpus), s.usd_per_gpu_hour);
  for (size_t k = 0; k < d.findings.size() && k < 3; ++k) {
    const diagnose::Finding& f = d.findings[k];
    out += StrFormat("  %zu. %s (confidence %.2f): %s\n", k + 1,
                     std::string(diagnose::CauseName(f.cause)).c_str(),
                     f.confidence, f.evidence.c_str());
  }
  return out;
}

const char* JobState(const JobMonitor::Snapshot& s) {
  for (const online::AlertEvent& a : s.view.active) {
    if (a.name == online::AlertName::kStragglerPersistent) return "alert";
  }
  if (!s.view.silent_ranks.empty()) return "silent ranks";
  return s.view.slowdown >= 1.05 ? "degraded" : "healthy";
}

std::string LiveJson(const JobMonitor::Snapshot& s, int64_t since_step) {
  JsonWriter w(0);
  const online::OnlineView& v = s.view;
  w.BeginObject();
  w.FieldString("job", s.name);
  w.FieldString("state", JobState(s));
  w.FieldInt("since_step", since_step);
  w.FieldInt("ranks", s.ranks);
  w.FieldInt("reporting", s.reporting);
  w.FieldIntArray("silent", v.silent_ranks);
  w.FieldInt("last_step", v.last_step);
  w.FieldInt("steps_closed", v.steps_closed);
  w.FieldInt("late_records", s.late_records);
  w.Field("mean_step_s", v.mean_step_s);
  w.Field("mean_excess_s", v.mean_excess_s);
  w.Field("utilization", v.utilization);
  w.Field("slowdown", v.slowdown);
  w.FieldInt("gpus", s.gpus);
  w.Field("usd_per_gpu_hour", s.usd_per_gpu_hour);
  w.Field("burn_usd_per_hour", BurnUsdPerHour(s));
  w.Field("wasted_gpu_hours", WastedGpuHours(s));
  w.Field("wasted_usd", WastedGpuHours(s) * s.usd_per_gpu_hour);
  w.FieldString("oncall", OnCallText(s));
  w.FieldString("probable_cause", diagnose::CauseName(v.diagnosis.probable_cause));
  w.FieldInt("largest_straggler", v.diagnosis.largest_straggler.rank);
  w.Key("steps");  // [step, t_end_s, step_s, ideal_s, last_rank, judged]
  w.BeginArray();
  for (const online::StepSummary& t : s.steps) {
    w.BeginArray();
    w.Int(t.step);
    w.Number(static_cast<double>(t.t_end_ns) * 1e-9);
    w.Number(static_cast<double>(t.step_ns) * 1e-9);
    w.Number(static_cast<double>(t.ideal_ns) * 1e-9);
    w.Int(t.last_rank);
    w.Int(t.judged ? 1 : 0);
    w.EndArray();
  }
  w.EndArray();
  w.Key("heatmap");
  w.BeginObject();
  w.FieldInt("dp", v.dp_size);
  w.FieldInt("pp", v.pp_size);
  Floats(w, "last", v.heat_last);
  Floats(w, "mean", v.heat_mean);
  w.EndObject();
  w.Key("stage_busy_s");
  w.BeginArray();
  for (double b : v.stage_busy_s) w.Number(b);
  w.EndArray();
  w.Key("top");
  w.BeginArray();
  for (const online::Suspect& t : v.top) SuspectObject(w, t);
  w.EndArray();
  w.Key("alerts");
  w.BeginArray();
  for (const online::AlertEvent& a : s.alerts) AlertObject(w, a);
  w.EndArray();
  w.Key("active");
  w.BeginArray();
  for (const online::AlertEvent& a : v.active) AlertObject(w, a);
  w.EndArray();
  w.Key("captures");
  w.BeginArray();
  for (const CaptureOrder& c : s.captures) CaptureObject(w, c);
  w.EndArray();
  w.EndObject();
  return w.str();
}

std::string JobsJson(const std::vector<JobMonitor::Snapshot>& jobs) {
  JsonWriter w(0);
  w.BeginObject();
  w.Key("jobs");
  w.BeginArray();
  for (const JobMonitor::Snapshot& s : jobs) {
    w.BeginObject();
    w.FieldString("job", s.name);
    w.FieldString("state", JobState(s));
    w.FieldInt("ranks", s.ranks);
    w.FieldInt("last_step", s.view.last_step);
    w.Field("utilization", s.view.utilization);
    w.Field("slowdown", s.view.slowdown);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str();
}

}  // namespace strag::serve
