// SPDX-License-Identifier: Apache-2.0
#include "whatif/prepared_generic.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace strag::whatif {
namespace {

using graph::NodeId;

void SetWorkers(const graph::GenericModel& m, PreparedTrace* p) {
  p->layout = Layout::kRanks;
  p->dp = 1;
  p->pp = static_cast<int32_t>(m.ranks.size());
  p->vpp = 1;
  p->steps = m.steps;
  p->worker_rank = m.ranks;
  for (size_t i = 0; i < m.ranks.size(); ++i) {
    p->workers.push_back(Worker{m.ranks[i], 0, static_cast<int32_t>(i)});
  }
}

void SetModel(graph::GenericModel* m, PreparedTrace* p) {
  graph::MegatronModel& model = p->model;
  model.keys.reserve(m->nodes.size());
  for (const graph::GenericNode& n : m->nodes) {
    model.keys.push_back(graph::OpKey{n.type, n.seq, n.rank_index});
  }
  model.index = graph::OpKeyIndex(model.keys, p->pp);
  model.optimizer_nodes = m->sink_nodes;
  model.graph = std::move(m->graph);
}

// Traced start, end and duration of every (node, step) slot in binary32
// seconds from the step's earliest start (which becomes 0).
void PlaceTimes(const graph::GenericModel& m, PreparedTrace* p,
                BigVector<float>* end, std::vector<float>* step_min) {
  const size_t n = m.nodes.size(), steps = m.steps.size();
  std::vector<int64_t> origin(steps, std::numeric_limits<int64_t>::max());
  for (size_t v = 0; v < n; ++v) {
    for (size_t s = 0; s < steps; ++s) {
      origin[s] = std::min(origin[s], m.start_ns[v * steps + s]);
    }
  }
  p->start.resize(n * steps);
  p->cost.resize(n * steps);
  end->resize(n * steps);
  step_min->assign(steps, 0.0f);
  for (size_t slot = 0; slot < n * steps; ++slot) {
    const auto start = static_cast<float>(
        static_cast<double>(m.start_ns[slot] - origin[slot % steps]) * 1e-9);
    const auto dur = static_cast<float>(static_cast<double>(m.dur_ns[slot]) * 1e-9);
    p->start[slot] = start;
    p->cost[slot] = dur;
    (*end)[slot] = start + dur;  // binary32, as for the ops CSV
  }
}

}  // namespace

Result<PreparedTrace> PrepareGenericTrace(graph::GenericModel model,
                                          trace::Topology topology) {
  if (model.nodes.empty() || model.steps.empty()) {
    return InvalidInput("the trace has no op in any complete step");
  }
  if (model.start_ns.size() != model.nodes.size() * model.steps.size() ||
      model.dur_ns.size() != model.start_ns.size()) {
    return InvalidInput("generic model: times do not match nodes x steps");
  }
  PreparedTrace p;
  SetWorkers(model, &p);
  if (topology.places.size() != model.ranks.size()) {
    topology = trace::Topology{};
    topology.dp = static_cast<int32_t>(model.ranks.size());
    topology.source = "unknown: each rank its own replica";
    for (size_t i = 0; i < model.ranks.size(); ++i) {
      topology.places.push_back(trace::RankPlace{
          model.ranks[i], static_cast<int32_t>(i), 0, 0, 0, 0});
    }
  }
  p.topology = std::move(topology);
  BigVector<float> end;
  std::vector<float> step_min;
  PlaceTimes(model, &p, &end, &step_min);
  SetModel(&model, &p);
  PreprocessTraced(end, step_min, &p);
  return p;
}

}  // namespace strag::whatif
