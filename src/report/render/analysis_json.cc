// SPDX-License-Identifier: Apache-2.0
#include "report/render/analysis_json.h"

#include <algorithm>
#include <span>

#include "base/json_writer.h"
#include "report/render/kernel_detail_json.h"
#include "report/render/plan_json.h"

namespace strag::report {
namespace {

using whatif::Counterfactual;
using whatif::Decomposition;
using whatif::WhatIfResult;

void StepMap(JsonWriter* w, std::string_view key, const WhatIfResult& r,
             std::span<const double> values) {
  w->Key(key);
  w->BeginObject();
  for (size_t s = 0; s < r.steps.size(); ++s) {
    w->Field(std::to_string(r.steps[s]), values[s]);
  }
  w->EndObject();
}

void GroupMap(JsonWriter* w, std::string_view key, const Decomposition& d) {
  w->Key(key);
  w->BeginObject();
  for (size_t g = 0; g < d.keys.size(); ++g) w->Field(d.keys[g], d.slowdown[g]);
  w->EndObject();
}

// step -> (group -> S)
void GroupMapPerStep(JsonWriter* w, std::string_view key, const WhatIfResult& r,
                     const Decomposition& d) {
  w->Key(key);
  w->BeginObject();
  for (size_t s = 0; s < r.steps.size(); ++s) {
    w->Key(std::to_string(r.steps[s]));
    w->BeginObject();
    for (size_t g = 0; g < d.keys.size(); ++g) {
      w->Field(d.keys[g], d.per_step[g][s]);
    }
    w->EndObject();
  }
  w->EndObject();
}

void WriteCounterfactual(JsonWriter* w, const Counterfactual& c) {
  w->BeginObject();
  w->FieldString("selector", c.selector);
  w->FieldString("direction", c.unfix ? "unfix" : "fix");
  w->FieldIntArray("ranks", c.ranks);
  w->Field("t_ori", c.t_ori);
  w->Field("t_ideal", c.t_ideal);
  w->Field("t_rem", c.t_rem);
  w->Field("t_add", c.t_add);
  w->Field("rem", c.rem);
  w->Field("add", c.add);
  w->EndObject();
}

void WriteJob(JsonWriter* w, const WhatIfResult& r, const trace::JobMeta& m) {
  w->Key("job");
  w->BeginObject();
  w->FieldString("layout",
                 whatif::LayoutName(r.layout));
  w->FieldInt("dp", r.dp);
  w->FieldInt("pp", r.pp);
  w->FieldInt("tp", m.tp);
  w->FieldInt("cp", m.cp);
  w->FieldInt("vpp", r.vpp);
  w->FieldInt("world_size", whatif::WorldSize(r, m));
  w->FieldInt("traced_workers", static_cast<int64_t>(r.workers.size()));
  w->FieldInt("steps", static_cast<int64_t>(r.steps.size()));
  w->FieldInt("ops", static_cast<int64_t>(r.num_ops));
  if (!m.trial_name.empty()) w->FieldString("trial_name", m.trial_name);
  w->EndObject();
}

void WriteReport(JsonWriter* w, const diagnose::Diagnosis& d,
                 const econ::StepCost& cost) {
  w->Key("report");
  w->BeginObject();
  if (cost.gpus > 0) w->Field("utilization", cost.utilization);
  w->FieldString("dominant_cause", d.dominant_cause);
  w->Key("largest_straggler");  // null: none named (a healthy job)
  if (d.largest_straggler.rank < 0) {
    w->Null();
  } else {
    w->BeginObject();
    w->FieldInt("rank", d.largest_straggler.rank);
    w->FieldInt("dp", d.largest_straggler.dp);
    w->FieldInt("pp", d.largest_straggler.pp);
    w->FieldInt("tp", d.largest_straggler.tp);
    w->FieldInt("node", d.largest_straggler.node);
    w->Key("host");  // null: the input names no hosts (node assumed)
    if (d.largest_straggler.host.empty()) {
      w->Null();
    } else {
      w->String(d.largest_straggler.host);
    }
    w->EndObject();
  }
  w->FieldString("scope", d.scope);
  w->Field("excess_step_time_ms", d.excess_step_time_ms);
  w->Field("blocking_share", d.blocking_share);
  w->Key("persistence");
  w->BeginObject();
  w->Field("p90_step_slowdown_over_s", d.persistence_p90);
  w->Key("persistent");  // null: unknown (a single step)
  if (d.persistence_known) {
    w->Bool(d.persistent);
  } else {
    w->Null();
  }
  w->Field("worst_worker_share_of_steps", d.worst_worker_share);
  w->EndObject();
  w->FieldString("probable_cause", diagnose::CauseName(d.probable_cause));
  w->Field("compute_share", d.compute_share);
  w->Field("communication_share", d.communication_share);
  if (cost.gpus > 0) {
    w->Field("wasted_gpu_seconds_per_step", cost.lost_gpu_seconds_per_step);
    w->Field("wasted_usd_per_hour", cost.wasted_usd_per_hour);
    w->Field("run_days", cost.run_days);
    w->Field("wasted_gpu_hours", cost.wasted_gpu_hours);
    w->Field("wasted_usd", cost.wasted_usd);
    w->Field("extra_days", cost.extra_days);
  }
  w->FieldInt("worst_step", d.worst_step);
  w->FieldString("worst_microbatch", d.worst_microbatch);
  w->FieldString("worst_collective", d.worst_collective);
  w->Key("findings");
  w->BeginArray();
  for (const diagnose::Finding& f : d.findings) {
    w->BeginObject();
    w->FieldString("cause", diagnose::CauseName(f.cause));
    w->Field("confidence", f.confidence);
    w->FieldIntArray("ranks", f.ranks);
    w->FieldString("evidence", f.evidence);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteInput(JsonWriter* w, const InputNotes& in) {
  w->Key("input");
  w->BeginObject();
  w->FieldString("format", in.format);
  w->FieldString("layout", in.layout);
  w->FieldInt("files", in.files);
  w->FieldInt("events", in.events);
  w->FieldInt("world_size", in.world_size);
  w->FieldIntArray("missing_ranks", in.missing_ranks);
  w->FieldInt("missing_rank_count", in.missing_rank_count);
  w->Key("skipped");
  w->BeginObject();
  for (const auto& [why, n] : in.skipped) w->FieldInt(why, n);
  w->EndObject();
  w->Key("warnings");
  w->BeginArray();
  for (const std::string& s : in.warnings) w->String(s);
  w->EndArray();
  w->Key("clock");
  w->BeginObject();
  w->FieldInt("collectives", in.clock.collectives);
  w->Key("kept_raw");
  w->Bool(in.clock.kept_raw);
  w->Field("residual_max_us", in.clock.residual_max_us);
  w->Field("residual_p99_us", in.clock.residual_p99_us);
  w->Key("offset_ns");
  w->BeginObject();
  for (const auto& [rank, off] : in.clock.offset_ns) {
    w->FieldInt(std::to_string(rank), off);
  }
  w->EndObject();
  w->EndObject();
  w->EndObject();
}

std::string Render(const WhatIfResult& r, const trace::JobMeta& meta,
                   const econ::StepCost& cost,
                   const diagnose::Diagnosis* diagnosis,
                   const InputNotes* input, const mitigate::Plan* plan,
                   const std::vector<KernelDetail>& kernel_detail) {
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.analysis/1");
  WriteJob(&w, r, meta);
  if (input) WriteInput(&w, *input);
  w.Key("step_time");
  w.BeginObject();
  StepMap(&w, "observed", r, r.step_t_observed);
  StepMap(&w, "replayed", r, r.step_t_replayed);
  StepMap(&w, "ideal", r, r.step_t_ideal);
  w.EndObject();
  w.Field("slowdown", r.slowdown);
  w.Field("waste", r.waste);
  w.Field("launch_slowdown", r.launch_slowdown);
  if (cost.gpus > 0) {
    w.Key("cost");
    w.BeginObject();
    // "cpu": a job of CPU-only traces (gloo); `gpus` then counts its ranks
    // and the price is 0 unless one was given.
    w.FieldString("device", input && input->cpu_only ? "cpu" : "gpu");
    w.FieldInt("gpus", cost.gpus);
    w.Field("utilization", cost.utilization);
    w.Field("lost_gpu_seconds_per_step", cost.lost_gpu_seconds_per_step);
    w.Field("usd_per_gpu_hour", cost.usd_per_gpu_hour);
    w.Field("wasted_usd_per_hour", cost.wasted_usd_per_hour);
    w.EndObject();
  }
  StepMap(&w, "slowdown_per_step", r, r.slowdown_per_step);
  StepMap(&w, "launch_slowdown_per_step", r, r.launch_slowdown_per_step);
  GroupMap(&w, "slowdown_by_optype", r.by_optype);
  GroupMap(&w, "slowdown_by_dp_rank", r.by_dp_rank);
  GroupMap(&w, "slowdown_by_stage", r.by_stage);
  GroupMapPerStep(&w, "slowdown_by_optype_per_step", r, r.by_optype);
  GroupMapPerStep(&w, "slowdown_by_dp_rank_per_step", r, r.by_dp_rank);
  GroupMapPerStep(&w, "slowdown_by_stage_per_step", r, r.by_stage);
  if (r.layout == whatif::Layout::kRanks) {  // by_stage is by global rank
    GroupMap(&w, "slowdown_by_rank", r.by_stage);
  }
  w.Key("worker_slowdown");
  w.BeginArray();
  for (const whatif::WorkerScore& s : r.workers) {
    w.BeginObject();
    w.FieldInt("rank", s.rank);
    w.FieldInt("dp", s.dp);
    w.FieldInt("pp", s.pp);
    w.Field("score", s.score);
    w.Field("unfix_slowdown", s.unfix_slowdown);
    w.EndObject();
  }
  w.EndArray();
  w.Key("fix_worst_workers");
  WriteCounterfactual(&w, r.fix_worst_workers);
  w.Key("fix_last_stage");
  WriteCounterfactual(&w, r.fix_last_stage);
  w.Key("counterfactuals");
  w.BeginArray();
  for (const Counterfactual& c : r.selected) WriteCounterfactual(&w, c);
  w.EndArray();
  w.Key("ideal_op_time");
  w.BeginObject();
  for (const whatif::IdealValue& v : r.ideal) w.Field(v.op_type, v.value_s);
  w.EndObject();
  w.Field("replay_self_test_max_error", r.self_test_max_error_s);
  if (diagnosis) WriteReport(&w, *diagnosis, cost);
  if (!kernel_detail.empty()) WriteKernelDetail(&w, kernel_detail);
  if (plan) {
    w.Key("plan");
    WritePlan(&w, *plan);
  }
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace

std::string RenderAnalysisJson(const Report& report) {
  return Render(report.result, report.meta, report.cost, &report.diagnosis,
                report.notes ? &*report.notes : nullptr,
                report.plan ? &*report.plan : nullptr, report.kernel_detail);
}

}  // namespace strag::report
