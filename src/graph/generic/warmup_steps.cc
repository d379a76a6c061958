// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/warmup_steps.h"

#include <algorithm>
#include <limits>

#include "base/median.h"

namespace strag::graph {

std::vector<int64_t> DropWarmupSteps(GenericModel* m) {
  const size_t steps = m->steps.size(), nodes = m->nodes.size();
  if (steps < 3 || nodes == 0) return {};
  std::vector<double> span(steps);
  for (size_t s = 0; s < steps; ++s) {
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = std::numeric_limits<int64_t>::min();
    for (size_t v = 0; v < nodes; ++v) {
      lo = std::min(lo, m->start_ns[v * steps + s]);
      hi = std::max(hi, m->start_ns[v * steps + s] + m->dur_ns[v * steps + s]);
    }
    span[s] = static_cast<double>(hi - lo);
  }
  std::vector<double> sorted = span;
  const double bar = kWarmupFactor * Median(&sorted);
  size_t drop = 0;
  while (drop + 2 < steps && span[drop] > bar) ++drop;
  if (drop == 0) return {};
  std::vector<int64_t> dropped(m->steps.begin(),
                               m->steps.begin() + static_cast<ptrdiff_t>(drop));
  const size_t kept = steps - drop;
  std::vector<int64_t> start(nodes * kept), dur(nodes * kept);
  for (size_t v = 0; v < nodes; ++v) {
    for (size_t s = 0; s < kept; ++s) {
      start[v * kept + s] = m->start_ns[v * steps + drop + s];
      dur[v * kept + s] = m->dur_ns[v * steps + drop + s];
    }
  }
  m->start_ns = std::move(start);
  m->dur_ns = std::move(dur);
  m->steps.erase(m->steps.begin(),
                 m->steps.begin() + static_cast<ptrdiff_t>(drop));
  m->counters.steps_dropped += static_cast<int64_t>(drop);
  return dropped;
}

}  // namespace strag::graph
