// SPDX-License-Identifier: Apache-2.0
#include "sim/trace_synth.h"

#include <cmath>

#include "graph/megatron/megatron_model.h"
#include "replay/replay_engine.h"
#include "sim/megatron_schedule.h"

namespace strag::sim {

Result<trace::OpsTable> SynthesizeTrace(const SynthJob& job, const CostFn& cost,
                                        const LaunchDelayFn& launch_delay) {
  if (job.dp < 1 || job.pp < 1 || job.vpp < 1 || job.microbatches < 1 ||
      job.steps.empty()) {
    return InvalidInput("a job needs dp, pp, vpp, microbatches >= 1 and a step");
  }
  // Reference instance: ordinal times in program order (only the order and
  // the no-op rules matter, and ordinal times trigger no no-op rule).
  std::vector<graph::RefOp> ref;
  std::vector<int32_t> microbatch_of;
  for (int32_t s = 0; s < job.pp; ++s) {
    const bool with_dp = job.dp > 1;
    const auto program =
        job.vpp > 1
            ? InterleavedProgram(s, job.pp, job.microbatches, job.vpp, with_dp)
            : OneFOneBProgram(s, job.pp, job.microbatches, with_dp);
    for (size_t k = 0; k < program.size(); ++k) {
      const ScheduledOp& op = program[k];
      ref.push_back(graph::RefOp{
          .key = {op.type, op.seq_id, s},
          .chunk = op.chunk,
          .global_chunk =
              trace::IsCompute(op.type) ? op.chunk * job.pp + s : -1,
          .start = static_cast<float>(k),
          .end = static_cast<float>(k) + 0.5f,
      });
      microbatch_of.push_back(op.microbatch);
    }
  }
  ASSIGN_OR_RETURN(graph::MegatronModel model,
                   graph::BuildMegatronModel(
                       ref, {.pp = job.pp, .vpp = job.vpp, .use_dp = job.dp > 1}));
  // The builder orders nodes by (stage, type, seq); find each node's ref op.
  const size_t n = model.keys.size();
  std::vector<size_t> ref_of(n);
  for (size_t r = 0; r < ref.size(); ++r) {
    ref_of[static_cast<size_t>(model.index.Find(ref[r].key))] = r;
  }
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
      const SynthOp op{lane_step(l), lane_dp(l),
                       key.stage,    key.type,
                       key.seq_id,   microbatch_of[ref_of[v]],
                       ref[ref_of[v]].chunk};
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
          const graph::RefOp& r = ref[ref_of[v]];
          const double start = times.start[v * lanes + l];
          const double end = times.end[v * lanes + l];
          table.rank.push_back(s * job.dp + d);
          table.dp.push_back(d);
          table.pp.push_back(s);
          table.step.push_back(job.steps[k]);
          table.op_type.push_back(key.type);
          table.seq_id.push_back(key.seq_id);
          table.chunk.push_back(r.chunk);
          table.microbatch.push_back(microbatch_of[ref_of[v]]);
          table.global_chunk.push_back(r.global_chunk);
          table.start_ns.push_back(origin + to_ns(start));
          table.dur_ns.push_back(to_ns(end) - to_ns(start));
        }
      }
    }
  }
  return table;
}

}  // namespace strag::sim
