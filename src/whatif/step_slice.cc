// SPDX-License-Identifier: Apache-2.0
#include "whatif/step_slice.h"

#include <algorithm>

namespace strag::whatif {
namespace {

// The instances [first, first + count) of every node of a per-slot array.
template <typename T>
BigVector<T> SliceSlots(const BigVector<T>& all, size_t nodes,
                        size_t instances, size_t first, size_t count) {
  BigVector<T> out;
  if (all.empty()) return out;
  out.resize(nodes * count);
  for (size_t v = 0; v < nodes; ++v) {
    std::copy_n(all.begin() + static_cast<ptrdiff_t>(v * instances + first),
                count, out.begin() + static_cast<ptrdiff_t>(v * count));
  }
  return out;
}

}  // namespace

PreparedTrace SliceSteps(const PreparedTrace& t, size_t first_step,
                         size_t count) {
  PreparedTrace w;
  w.layout = t.layout;
  w.model = t.model;
  w.dp = t.dp, w.pp = t.pp, w.vpp = t.vpp;
  const auto from = static_cast<ptrdiff_t>(first_step);
  const auto to = static_cast<ptrdiff_t>(first_step + count);
  w.steps.assign(t.steps.begin() + from, t.steps.begin() + to);
  w.workers = t.workers;
  w.worker_rank = t.worker_rank;
  w.topology = t.topology;
  const auto dp = static_cast<size_t>(t.dp);
  const size_t nodes = t.num_nodes(), all = t.num_instances();
  const size_t first = first_step * dp, n = count * dp;
  w.row = SliceSlots(t.row, nodes, all, first, n);
  w.start = SliceSlots(t.start, nodes, all, first, n);
  w.launch_delay = SliceSlots(t.launch_delay, nodes, all, first, n);
  w.cost = SliceSlots(t.cost, nodes, all, first, n);
  if (!t.step_t_base.empty()) {
    w.step_t_base.assign(t.step_t_base.begin() + from,
                         t.step_t_base.begin() + to);
  }
  return w;
}

}  // namespace strag::whatif
