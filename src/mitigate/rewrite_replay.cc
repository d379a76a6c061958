// SPDX-License-Identifier: Apache-2.0
#include "mitigate/rewrite_replay.h"

#include "base/check.h"

namespace strag::mitigate {

std::vector<double> RewriteReplayer::Execute(
    std::span<const double> cost, size_t lanes, size_t lanes_per_domain,
    std::span<const float> launch_delay, uint32_t quorum) {
  const size_t n = trace_.num_nodes();
  const std::vector<const double*> rows = replay::DenseRows(cost, n, lanes);
  const std::vector<double> unused(n, 0.0);
  std::vector<uint32_t> sync;
  for (size_t l = 0; l <= lanes; l += lanes_per_domain) {
    sync.push_back(static_cast<uint32_t>(l));
  }
  const replay::ReplayInput input{
      .graph = &trace_.model.graph,
      .num_lanes = lanes,
      .cost = {.rows = rows, .values = unused},
      .launch_delay = launch_delay,
      .sync_offsets = sync,
      .optimizer_nodes = trace_.model.optimizer_nodes,
      .root_start = 0.0,
      .dp_quorum = quorum,
  };
  replayed_ops_ += n * lanes;
  return replay::Replay(input, &workspace_).opt;
}

std::vector<double> RewriteReplayer::Replayed(const Rewrite& rw) {
  const size_t steps = trace_.steps.size();
  const size_t per_step = rw.lanes_per_step > 0
                              ? static_cast<size_t>(rw.lanes_per_step)
                              : static_cast<size_t>(trace_.dp);
  const size_t lanes = steps * per_step;
  std::span<const double> cost = rw.cost;
  if (cost.empty()) cost = trace_.cost;
  STRAG_CHECK(cost.size() == trace_.num_nodes() * lanes,
              "a rewrite's costs match its lanes");
  if (!rw.lane_per_domain || per_step == 1) {
    return Execute(cost, lanes, per_step, {}, rw.dp_quorum);
  }
  // No lane waits for another: the replicas' rates add up, so a global
  // step takes per_step / sum(1 / T_lane).
  const std::vector<double> lane = Execute(cost, lanes, 1, {}, 0);
  std::vector<double> out(steps, 0.0);
  for (size_t k = 0; k < lane.size(); ++k) out[k / per_step] += 1.0 / lane[k];
  for (double& x : out) x = static_cast<double>(per_step) / x;
  return out;
}

std::vector<double> RewriteReplayer::WithDelays(
    std::span<const float> launch_delay) {
  if (launch_delay.empty()) launch_delay = trace_.launch_delay;
  STRAG_CHECK(launch_delay.size() == trace_.cost.size(),
              "launch delays match the trace's slots");
  return Execute(trace_.cost, trace_.num_instances(),
                 static_cast<size_t>(trace_.dp), launch_delay, 0);
}

double RewriteReplayer::IdealStep(std::span<const double> ideal_node_cost) {
  const size_t n = trace_.num_nodes();
  const std::vector<const double*> rows(n, nullptr);
  const std::vector<uint32_t> sync = {0, 1};
  const replay::ReplayInput input{
      .graph = &trace_.model.graph,
      .num_lanes = 1,
      .cost = {.rows = rows, .values = ideal_node_cost},
      .launch_delay = {},
      .sync_offsets = sync,
      .optimizer_nodes = trace_.model.optimizer_nodes,
      .root_start = 0.0,
      .dp_quorum = 0,
  };
  replayed_ops_ += n;
  return replay::Replay(input, &workspace_).opt.at(0);
}

}  // namespace strag::mitigate
