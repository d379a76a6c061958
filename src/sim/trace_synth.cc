// SPDX-License-Identifier: Apache-2.0
#include "sim/trace_synth.h"

#include <cmath>

#include "graph/megatron/megatron_model.h"
#include "replay/replay_engine.h"
#include "sim/schedule_model.h"

namespace strag::sim {

Result<trace::OpsTable> SynthesizeTrace(const SynthJob& job, const CostFn& cost,
                                        const LaunchDelayFn& launch_delay) {
  if (job.dp < 1 || job.pp < 1 || job.vpp < 1 || job.microbatches < 1 ||
      job.steps.empty()) {
    return InvalidInput(
        "a job needs dp, pp, vpp, microbatches >= 1 and a step");
  }
  ASSIGN_OR_RETURN(
      ScheduleModel schedule,
      BuildScheduleModel(job.pp, job.vpp, job.microbatches, job.dp > 1));
  const graph::MegatronModel& model = schedule.model;
  const size_t n = model.keys.size();
  const size_t lanes = job.steps.size() * static_cast<size_t>(job.dp);
  std::vector<double> costs(n * lanes);
  std::vector<float> delays(launch_delay ? n * lanes : 0);
  std::vector<uint32_t> sync_offsets;
  for (size_t l = 0; l <= lanes; l += static_cast<size_t>(job.dp)) {
    sync_offsets.push_back(static_cast<uint32_t>(l));
  }
  auto lane_step = [&](size_t l) {
    return job.steps[l / static_cast<size_t>(job.dp)];
  };
  auto lane_dp = [&](size_t l) {
    return static_cast<int32_t>(l % static_cast<size_t>(job.dp));
  };
  for (size_t v = 0; v < n; ++v) {
    const graph::OpKey& key = model.keys[v];
    for (size_t l = 0; l < lanes; ++l) {
      const SynthOp op{lane_step(l),     lane_dp(l), key.stage,
                       key.type,         key.seq_id, schedule.microbatch[v],
                       schedule.chunk[v]};
      costs[v * lanes + l] = cost(op);
      if (launch_delay) {
        delays[v * lanes + l] = static_cast<float>(launch_delay(op));
      }
    }
  }
  const std::vector<const double*> rows = replay::DenseRows(costs, n, lanes);
  const std::vector<double> unused(n, 0.0);
  const replay::ReplayInput input{.graph = &model.graph,
                                  .num_lanes = lanes,
                                  .cost = {.rows = rows, .values = unused},
                                  .launch_delay = delays,
                                  .sync_offsets = sync_offsets,
                                  .optimizer_nodes = model.optimizer_nodes};
  replay::ReplayWorkspace workspace;
  replay::ReplayTimes times;
  replay::Replay(input, &workspace, &times);

  trace::OpsTable table;
  table.Reserve(n * lanes);
  auto to_ns = [](double seconds) { return std::llround(seconds * 1e9); };
  for (size_t k = 0; k < job.steps.size(); ++k) {
    const int64_t origin = job.step_period_ns * static_cast<int64_t>(k);
    for (int32_t s = 0; s < job.pp; ++s) {
      for (int32_t d = 0; d < job.dp; ++d) {
        const size_t l =
            k * static_cast<size_t>(job.dp) + static_cast<size_t>(d);
        for (size_t v = 0; v < n; ++v) {
          const graph::OpKey& key = model.keys[v];
          if (key.stage != s) continue;
          const double start = times.start[v * lanes + l];
          const double end = times.end[v * lanes + l];
          table.rank.push_back(s * job.dp + d);
          table.dp.push_back(d);
          table.pp.push_back(s);
          table.step.push_back(job.steps[k]);
          table.op_type.push_back(key.type);
          table.seq_id.push_back(key.seq_id);
          table.chunk.push_back(schedule.chunk[v]);
          table.microbatch.push_back(schedule.microbatch[v]);
          table.global_chunk.push_back(
              trace::IsCompute(key.type) ? schedule.chunk[v] * job.pp + s : -1);
          table.start_ns.push_back(origin + to_ns(start));
          table.dur_ns.push_back(to_ns(end) - to_ns(start));
        }
      }
    }
  }
  return table;
}

}  // namespace strag::sim
