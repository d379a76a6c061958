// SPDX-License-Identifier: Apache-2.0
#include "report/render/plan_json.h"

namespace strag::report {
namespace {

void WriteEffects(JsonWriter* w, const mitigate::SideEffects& e) {
  w->Key("side_effects");
  w->BeginObject();
  w->Key("restart");
  w->Bool(e.restart);
  w->Field("downtime_s", e.downtime_s);
  w->FieldInt("extra_gpus", e.extra_gpus);
  w->FieldString("semantics", mitigate::SemanticsName(e.semantics));
  w->Field("token_fraction", e.token_fraction);
  w->Key("memory_change_per_stage");
  w->BeginArray();
  for (double x : e.memory_change_per_stage) w->Number(x);
  w->EndArray();
  w->FieldString("caveat", e.caveat);
  w->EndObject();
}

void WriteRow(JsonWriter* w, size_t rank, const mitigate::PlanRow& r) {
  w->BeginObject();
  if (r.within_noise) {
    w->Key("rank");
    w->Null();
  } else {
    w->FieldInt("rank", static_cast<int64_t>(rank));
  }
  w->FieldString("policy", r.policy);
  w->FieldString("family", mitigate::FamilyName(r.family));
  w->FieldString("action", r.action);
  w->FieldString("params", r.params);
  w->FieldString("evidence", r.evidence);
  w->Key("bound");
  w->Bool(r.bound);
  w->FieldString("bound_note", r.bound_note);
  w->Field("step_s", r.step_s);
  w->Field("slowdown_after", r.slowdown_after);
  w->Field("gain_step_s", r.gain_step_s);
  w->Field("recovered", r.recovered);
  w->Key("within_noise");
  w->Bool(r.within_noise);
  w->Field("gpu_hours_saved_per_day", r.gpu_hours_per_day);
  w->Field("net_gpu_hours", r.net_gpu_hours);
  w->Field("net_usd", r.net_usd);
  w->Field("break_even_hours", r.break_even_hours);
  WriteEffects(w, r.effects);
  w->Key("alternatives");
  w->BeginArray();
  for (const mitigate::Alternative& a : r.alternatives) {
    w->BeginObject();
    w->FieldString("action", a.action);
    w->FieldString("params", a.params);
    w->Field("step_s", a.step_s);
    w->Field("net_gpu_hours", a.net_gpu_hours);
    w->Key("within_noise");
    w->Bool(a.within_noise);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace

void WritePlan(JsonWriter* w, const mitigate::Plan& p) {
  w->BeginObject();
  if (!p.withheld.empty()) {
    w->FieldString("withheld", p.withheld);
    w->EndObject();
    return;
  }
  w->Field("step_s", p.step_s);
  w->Field("replayed_step_s", p.replayed_s);
  w->Field("ideal_step_s", p.ideal_s);
  w->Field("slowdown", p.slowdown);
  w->Field("noise_band_s", p.band_s);
  w->FieldString("noise_band", p.band_note);
  w->FieldInt("gpus", p.gpus);
  w->Field("usd_per_gpu_hour", p.usd_per_gpu_hour);
  w->Field("horizon_hours", p.horizon_hours);
  w->Field("checkpoint_interval_s", p.checkpoint_interval_s);
  w->Field("restart_s", p.restart_s);
  w->FieldInt("token_cap", p.token_cap);
  w->Key("fixes");
  w->BeginArray();
  size_t rank = 0;
  for (const mitigate::PlanRow& r : p.rows) {
    WriteRow(w, r.within_noise ? 0 : ++rank, r);
  }
  w->EndArray();
  w->Key("not_applicable");
  w->BeginArray();
  for (const mitigate::SkippedPolicy& s : p.skipped) {
    w->BeginObject();
    w->FieldString("policy", s.policy);
    w->FieldString("family", mitigate::FamilyName(s.family));
    w->FieldString("reason", s.reason);
    w->EndObject();
  }
  w->EndArray();
  w->FieldInt("replayed_ops", static_cast<int64_t>(p.replayed_ops));
  w->EndObject();
}

std::string RenderPlanJson(const Report& report) {
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.plan/1");
  w.FieldString("source", report.source);
  w.Key("job");
  w.BeginObject();
  w.FieldInt("dp", report.result.dp);
  w.FieldInt("pp", report.result.pp);
  w.FieldInt("traced_workers",
             static_cast<int64_t>(report.result.workers.size()));
  w.FieldInt("steps", static_cast<int64_t>(report.result.steps.size()));
  w.Field("slowdown", report.result.slowdown);
  w.Field("utilization", report.cost.utilization);
  w.FieldString("probable_cause",
                diagnose::CauseName(report.diagnosis.probable_cause));
  w.EndObject();
  if (report.plan) {
    w.Key("plan");
    WritePlan(&w, *report.plan);
  }
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace strag::report
