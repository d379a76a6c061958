// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_engine.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace strag::replay {
namespace {

// Lanes are replayed in windows of whole sync domains (steps never interact),
// sized so that a window's rows of start / end / cost stay in cache.
constexpr size_t kWindowLanes = 64;

struct Window {
  size_t lo;     // first lane
  size_t lanes;  // number of lanes
  size_t first_domain, end_domain;
};

// start[v, window] = max(end of deps) (or root_start) + launch delay.
void StartNode(const ReplayInput& in, const Window& w, graph::NodeId v,
               ReplayTimes* t) {
  const size_t stride = in.num_lanes, lanes = w.lanes;
  double* start = t->start.data() + v * stride + w.lo;
  const uint32_t* dep = in.graph->dep_begin(v);
  const uint32_t* dep_end = in.graph->dep_end(v);
  if (dep == dep_end) {
    std::fill(start, start + lanes, in.root_start);
  } else {
    const double* first = t->end.data() + size_t{*dep} * stride + w.lo;
    std::copy(first, first + lanes, start);
    for (++dep; dep != dep_end; ++dep) {
      const double* e = t->end.data() + size_t{*dep} * stride + w.lo;
      for (size_t l = 0; l < lanes; ++l) start[l] = std::max(start[l], e[l]);
    }
  }
  if (!in.launch_delay.empty()) {
    const float* ld = in.launch_delay.data() + v * stride + w.lo;
    for (size_t l = 0; l < lanes; ++l) start[l] += static_cast<double>(ld[l]);
  }
}

void RunGroup(const ReplayInput& in, const Window& w,
              const graph::CommGroup& group, ReplayTimes* t) {
  const size_t stride = in.num_lanes, lanes = w.lanes;
  double* gs = t->scratch.data();  // indexed by lane - w.lo
  std::fill(gs, gs + lanes, -std::numeric_limits<double>::infinity());
  for (graph::NodeId m : group.members) {
    StartNode(in, w, m, t);
    const double* start = t->start.data() + m * stride + w.lo;
    for (size_t l = 0; l < lanes; ++l) gs[l] = std::max(gs[l], start[l]);
  }
  if (group.dp_sync) {
    for (size_t k = w.first_domain; k < w.end_domain; ++k) {
      const size_t lo = in.sync_offsets[k] - w.lo;
      const size_t hi = in.sync_offsets[k + 1] - w.lo;
      const double m = *std::max_element(gs + lo, gs + hi);
      std::fill(gs + lo, gs + hi, m);
    }
  }
  for (graph::NodeId m : group.members) {
    double* end = t->end.data() + m * stride + w.lo;
    const double* cost = in.cost.data() + m * stride + w.lo;
    for (size_t l = 0; l < lanes; ++l) end[l] = gs[l] + cost[l];
  }
}

void ReplayWindow(const ReplayInput& in, const Window& w, ReplayTimes* t) {
  const size_t stride = in.num_lanes;
  const auto& groups = in.graph->groups();
  for (const graph::ScheduleUnit& unit : in.graph->schedule()) {
    if (unit.is_group) {
      RunGroup(in, w, groups[unit.id], t);
      continue;
    }
    const graph::NodeId v = unit.id;
    StartNode(in, w, v, t);
    const double* start = t->start.data() + v * stride + w.lo;
    const double* cost = in.cost.data() + v * stride + w.lo;
    double* end = t->end.data() + v * stride + w.lo;
    for (size_t l = 0; l < w.lanes; ++l) end[l] = start[l] + cost[l];
  }
}

}  // namespace

void Replay(const ReplayInput& in, ReplayTimes* t) {
  const size_t n = in.graph->num_nodes() * in.num_lanes;
  assert(in.cost.size() == n && "cost has one value per node and lane");
  assert(in.launch_delay.empty() || in.launch_delay.size() == n);
  assert(!in.sync_offsets.empty() && in.sync_offsets.back() == in.num_lanes);
  t->start.Resize(n);
  t->end.Resize(n);
  t->scratch.Resize(in.num_lanes);
  const size_t domains = in.sync_offsets.size() - 1;
  for (size_t k = 0; k < domains;) {
    Window w{in.sync_offsets[k], 0, k, k};
    while (w.end_domain < domains &&
           (w.end_domain == k ||
            in.sync_offsets[w.end_domain + 1] - w.lo <= kWindowLanes)) {
      ++w.end_domain;
    }
    w.lanes = in.sync_offsets[w.end_domain] - w.lo;
    ReplayWindow(in, w, t);
    k = w.end_domain;
  }
}

StepTimes ComputeStepTimes(const ReplayInput& in, const ReplayTimes& t,
                           std::span<const graph::NodeId> optimizer_nodes) {
  const size_t lanes = in.num_lanes;
  const size_t num_nodes = in.graph->num_nodes();
  const size_t steps = in.sync_offsets.size() - 1;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> lane_min(lanes, kInf), lane_max(lanes, -kInf),
      lane_opt(lanes, -kInf);
  for (size_t v = 0; v < num_nodes; ++v) {
    const double* s = t.start.data() + v * lanes;
    const double* e = t.end.data() + v * lanes;
    for (size_t l = 0; l < lanes; ++l) {
      lane_min[l] = std::min(lane_min[l], s[l]);
      lane_max[l] = std::max(lane_max[l], e[l]);
    }
  }
  for (graph::NodeId v : optimizer_nodes) {
    const double* e = t.end.data() + v * lanes;
    for (size_t l = 0; l < lanes; ++l) lane_opt[l] = std::max(lane_opt[l], e[l]);
  }
  StepTimes out;
  out.span.resize(steps);
  out.opt.resize(steps);
  for (size_t k = 0; k < steps; ++k) {
    double lo = kInf, hi = -kInf, opt = -kInf;
    for (uint32_t l = in.sync_offsets[k]; l < in.sync_offsets[k + 1]; ++l) {
      lo = std::min(lo, lane_min[l]);
      hi = std::max(hi, lane_max[l]);
      opt = std::max(opt, lane_opt[l]);
    }
    out.span[k] = hi - lo;
    out.opt[k] = opt - in.root_start;
  }
  return out;
}

}  // namespace strag::replay
