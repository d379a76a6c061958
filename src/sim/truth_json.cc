// SPDX-License-Identifier: Apache-2.0
#include "sim/truth_json.h"

#include "base/f32.h"
#include "base/json_writer.h"

namespace strag::sim {

std::string RenderTruthJson(const sim::SimulatedJob& job) {
  const sim::JobSection& j = job.spec.job;
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.truth/1");
  w.FieldString("name", job.spec.name);
  w.Key("job");
  w.BeginObject();
  w.FieldInt("dp", j.dp);
  w.FieldInt("backup_workers", j.backup_workers);
  w.FieldInt("pp", j.pp);
  w.FieldInt("tp", j.tp);
  w.FieldInt("cp", j.cp);
  w.FieldInt("vpp", j.vpp);
  w.FieldInt("world_size", int64_t{job.dp_replicas} * j.pp * j.tp * j.cp);
  w.FieldInt("gpus_per_node", j.gpus_per_node);
  w.FieldInt("microbatches", j.microbatches);
  w.FieldInt("steps", j.steps);
  w.FieldInt("seed", static_cast<int64_t>(j.seed));
  w.EndObject();
  w.Field("mean_step_time", PairwiseMean(job.step_times.opt));
  w.Key("step_time");
  w.BeginObject();
  for (size_t k = 0; k < job.steps.size(); ++k) {
    w.Field(std::to_string(job.steps[k]), job.step_times.opt[k]);
  }
  w.EndObject();
  w.Key("stragglers");
  w.BeginArray();
  for (const sim::TruthRecord& t : job.truth) {
    w.BeginObject();
    w.FieldString("kind", t.kind);
    w.FieldInt("rank", t.rank);
    w.FieldInt("dp", t.dp);
    w.FieldInt("pp", t.pp);
    w.FieldInt("tp", t.tp);
    w.FieldInt("cp", t.cp);
    w.FieldInt("node", t.node);
    w.FieldInt("worker_rank", t.worker_rank);
    w.FieldIntArray("tp_group", t.tp_group);
    w.Field("factor", t.factor);
    w.FieldIntArray("steps", t.steps);
    w.Field("slowdown", t.slowdown);
    w.Field("excess_step_ms", t.excess_step_ms);
    w.Field("blocking_slowdown", t.blocking_slowdown);
    w.Field("blocking_excess_step_ms", t.blocking_excess_step_ms);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace strag::sim
