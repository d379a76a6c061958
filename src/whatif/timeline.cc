// SPDX-License-Identifier: Apache-2.0
#include "whatif/timeline.h"

#include <algorithm>
#include <numeric>

#include "replay/replay_engine.h"

namespace strag::whatif {
namespace {

using graph::NodeId;

struct Replayed {
  replay::ReplayTimes times;
  replay::StepTimes steps;
  size_t lanes = 0;
};

Replayed ReplayStep(const PreparedTrace& t, std::span<const double* const> rows,
                    std::span<const double> values, size_t lanes) {
  Replayed out;
  out.lanes = lanes;
  const std::vector<uint32_t> sync = {0, static_cast<uint32_t>(lanes)};
  const replay::ReplayInput in{.graph = &t.model.graph,
                               .num_lanes = lanes,
                               .cost = {.rows = rows, .values = values},
                               .launch_delay = {},
                               .sync_offsets = sync,
                               .optimizer_nodes = t.model.optimizer_nodes};
  replay::ReplayWorkspace ws;
  out.steps = replay::Replay(in, &ws, &out.times);
  return out;
}

// The (node, lane) this one waited for: for a comm op the latest-starting
// member of its rendezvous when that is another op, else the dependency whose
// end set its start; {-1, -1} for a root.
std::pair<int64_t, int64_t> WaitedFor(const PreparedTrace& t, const Replayed& r,
                                      NodeId v, size_t lane) {
  const graph::DepGraph& g = t.model.graph;
  auto start = [&](NodeId u, size_t l) { return r.times.start[u * r.lanes + l]; };
  auto end = [&](NodeId u, size_t l) { return r.times.end[u * r.lanes + l]; };
  if (g.is_comm(v)) {
    const graph::CommGroup& group = g.groups()[static_cast<size_t>(g.group_of(v))];
    const size_t lo = group.dp_sync ? 0 : lane, hi = group.dp_sync ? r.lanes : lane + 1;
    std::pair<int64_t, int64_t> latest{v, static_cast<int64_t>(lane)};
    double best = start(v, lane);
    for (NodeId m : group.members) {
      for (size_t l = lo; l < hi; ++l) {
        if (start(m, l) > best) best = start(m, l), latest = {m, static_cast<int64_t>(l)};
      }
    }
    if (latest.first != v || latest.second != static_cast<int64_t>(lane)) return latest;
  }
  std::pair<int64_t, int64_t> dep{-1, -1};
  double best = -1;
  for (const uint32_t* u = g.dep_begin(v); u != g.dep_end(v); ++u) {
    if (end(*u, lane) > best) best = end(*u, lane), dep = {*u, static_cast<int64_t>(lane)};
  }
  return dep;
}

}  // namespace

Result<Timeline> BuildTimeline(const PreparedTrace& t, size_t step_index,
                               const std::vector<double>& ideal_cost) {
  if (step_index >= t.steps.size()) {
    return InvalidInput("step index " + std::to_string(step_index) + " out of range");
  }
  const size_t n = t.num_nodes(), inst = t.num_instances();
  const auto dp = static_cast<size_t>(t.dp);
  std::vector<const double*> rows(n);
  for (NodeId v = 0; v < n; ++v) rows[v] = t.cost.data() + v * inst + step_index * dp;
  const std::vector<double> zeros(n, 0.0);
  const Replayed actual = ReplayStep(t, rows, zeros, dp);
  const std::vector<const double*> no_rows(n, nullptr);
  const bool has_ideal = ideal_cost.size() == n;
  const Replayed ideal = has_ideal ? ReplayStep(t, no_rows, ideal_cost, 1)
                                   : ReplayStep(t, rows, zeros, dp);

  Timeline out;
  out.layout = t.layout;
  out.step = t.steps[step_index];
  out.step_time_s = actual.steps.opt[0];
  out.ideal_step_time_s = ideal.steps.opt[0];
  // One entry per (node, lane), then sorted by worker and start.
  std::vector<std::pair<NodeId, size_t>> keys;
  for (NodeId v = 0; v < n; ++v) {
    for (size_t d = 0; d < dp; ++d) keys.emplace_back(v, d);
  }
  auto rank_of = [&](NodeId v, size_t d) {
    return t.worker_rank[d * static_cast<size_t>(t.pp) +
                         static_cast<size_t>(t.model.keys[v].stage)];
  };
  auto start_of = [&](NodeId v, size_t d) { return actual.times.start[v * dp + d]; };
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
    const int32_t ra = rank_of(a.first, a.second), rb = rank_of(b.first, b.second);
    if (ra != rb) return ra < rb;
    return start_of(a.first, a.second) < start_of(b.first, b.second);
  });
  std::vector<int64_t> index(n * dp);
  for (size_t k = 0; k < keys.size(); ++k) index[keys[k].first * dp + keys[k].second] = static_cast<int64_t>(k);
  for (const auto& [v, d] : keys) {
    const graph::OpKey& key = t.model.keys[v];
    const size_t il = has_ideal ? 0 : d;
    TimelineOp op;
    op.rank = rank_of(v, d);
    op.dp = static_cast<int32_t>(d);
    op.pp = key.stage;
    op.type = key.type;
    op.seq_id = key.seq_id;
    op.microbatch = trace::IsCompute(key.type) ? key.seq_id : -1;
    op.comm = t.model.graph.is_comm(v);
    op.start_s = actual.times.start[v * dp + d];
    op.end_s = actual.times.end[v * dp + d];
    op.ideal_start_s = ideal.times.start[v * ideal.lanes + il];
    op.ideal_end_s = ideal.times.end[v * ideal.lanes + il];
    const auto [wv, wl] = WaitedFor(t, actual, v, d);
    if (wv >= 0) op.waited_for = index[static_cast<size_t>(wv) * dp + static_cast<size_t>(wl)];
    out.ops.push_back(op);
  }
  // The critical path: back from the latest optimizer end along the waits.
  int64_t at = -1;
  double latest = -1;
  for (NodeId v : t.model.optimizer_nodes) {
    for (size_t d = 0; d < dp; ++d) {
      if (actual.times.end[v * dp + d] > latest) {
        latest = actual.times.end[v * dp + d];
        at = index[v * dp + d];
      }
    }
  }
  for (size_t guard = 0; at >= 0 && guard < out.ops.size(); ++guard) {
    TimelineOp& op = out.ops[static_cast<size_t>(at)];
    if (op.on_critical_path) break;
    op.on_critical_path = true;
    at = op.waited_for;
  }
  return out;
}

}  // namespace strag::whatif
