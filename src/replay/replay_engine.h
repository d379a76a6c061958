// SPDX-License-Identifier: Apache-2.0
// The replay engine: topological replay of a DepGraph with rendezvous
// semantics (DESIGN.md §5, whatif-spec.md §5), vectorised over lanes.
//
// A lane is one copy of the per-instance graph: one DP replica in one step,
// or several identical replicas folded into one (a max over identical values
// is the value itself, so folding is exact). Lanes of the same step form one
// sync domain: `dp_sync` groups take their rendezvous time over all of them.
//
// For node v and lane l (index v * num_lanes + l):
//   ready = max(end of deps)                  (root_start for a root)
//   start = ready + launch_delay
//   plain: end = start + cost
//   comm:  end = max(start of the group's members [over the sync domain])
//                + cost                        (cost = transfer time)
// Cost O((nodes + edges) * lanes); the inner loops run over contiguous lanes.

#ifndef STRAG_SRC_REPLAY_REPLAY_ENGINE_H_
#define STRAG_SRC_REPLAY_REPLAY_ENGINE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "base/uninit_buffer.h"
#include "graph/dep_graph.h"

namespace strag::replay {

struct ReplayInput {
  const graph::DepGraph* graph = nullptr;  // not owned; must be finalized
  size_t num_lanes = 0;
  // Own time of each op in seconds: duration for plain ops, transfer time for
  // comm ops. Layout [node * num_lanes + lane].
  std::span<const double> cost;
  // Launch delay in seconds, same layout; empty means all zero.
  std::span<const float> launch_delay;
  // Lanes [sync_offsets[k], sync_offsets[k + 1]) form sync domain k (one
  // step); the last entry is num_lanes.
  std::span<const uint32_t> sync_offsets;
  double root_start = 0.0;  // start of a step: roots begin here (+ delay)
};

// Replayed start and end times, layout [node * num_lanes + lane]. Reused
// across calls to avoid reallocations.
struct ReplayTimes {
  UninitBuffer<double> start;
  UninitBuffer<double> end;
  UninitBuffer<double> scratch;  // per-lane rendezvous times
};

void Replay(const ReplayInput& input, ReplayTimes* times);

// Per sync domain (step): `span` = max end - min start over every op and
// lane; `opt` = max end of `optimizer_nodes` - root_start.
struct StepTimes {
  std::vector<double> span;
  std::vector<double> opt;
};
StepTimes ComputeStepTimes(const ReplayInput& input, const ReplayTimes& times,
                           std::span<const graph::NodeId> optimizer_nodes);

}  // namespace strag::replay

#endif  // STRAG_SRC_REPLAY_REPLAY_ENGINE_H_
