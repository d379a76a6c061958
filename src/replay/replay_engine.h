// SPDX-License-Identifier: Apache-2.0
// The replay engine: topological replay of a DepGraph with rendezvous
// semantics (DESIGN.md §5, whatif-spec.md §5), vectorised over lanes.
//
// A lane is one copy of the per-instance graph: one DP replica in one step,
// or several identical replicas folded into one (a max over identical values
// is the value itself, so folding is exact). Lanes of the same step form one
// sync domain: `dp_sync` groups take their rendezvous time over all of them.
//
// For node v and lane l:
//   ready = max(end of deps)                  (root_start for a root)
//   start = ready + launch_delay
//   plain: end = start + cost
//   comm:  end = max(start of the group's members [over the sync domain])
//                + cost                        (cost = transfer time)
// Cost O((nodes + edges) * lanes). Lanes are replayed in cache-sized windows
// of whole sync domains (steps never interact); unless the caller keeps the
// times, they never leave the window's scratch, so a replay streams its
// inputs once and writes almost nothing.

#ifndef STRAG_SRC_REPLAY_REPLAY_ENGINE_H_
#define STRAG_SRC_REPLAY_REPLAY_ENGINE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/uninit_buffer.h"
#include "graph/dep_graph.h"

namespace strag::replay {

// Own time of every (node, lane) in seconds: the duration of a plain op, the
// transfer time of a comm op. Node v reads `rows[v][lane]` when rows[v] is
// not null (num_lanes values), else `values[v]` on every lane.
struct Costs {
  std::span<const double* const> rows;  // per node
  std::span<const double> values;       // per node
};

enum class Kernels : uint8_t { kWidest, kBaseline };

struct ReplayInput {
  const graph::DepGraph* graph = nullptr;  // not owned; must be finalized
  size_t num_lanes = 0;
  Costs cost;
  // Launch delay in seconds, layout [node * num_lanes + lane]; empty = zero.
  std::span<const float> launch_delay;
  // Lanes [sync_offsets[k], sync_offsets[k + 1]) form sync domain k (one
  // step); the last entry is num_lanes.
  std::span<const uint32_t> sync_offsets;
  // The ops whose latest end is the step time T_opt.
  std::span<const graph::NodeId> optimizer_nodes;
  double root_start = 0.0;  // start of a step: roots begin here (+ delay)
  // Backup workers: a dp_sync group completes once this many lanes of the
  // sync domain have started (0: all). Only meaningful when every lane is one
  // DP replica (no folding); late lanes end with the group.
  uint32_t dp_quorum = 0;
  // The instruction set of the inner loop: the widest the CPU has (AVX2 on
  // x86-64 where present), or the baseline build's. Both give the same
  // bits (only adds and maxima); the choice exists for tests.
  Kernels kernels = Kernels::kWidest;
};

// Per sync domain (step): `span` = max end - min start over every op and
// lane; `opt` = max end of the optimizer nodes - root_start.
struct StepTimes {
  std::vector<double> span;
  std::vector<double> opt;
};

// Every replayed start and end, layout [node * num_lanes + lane].
struct ReplayTimes {
  UninitBuffer<double> start;
  UninitBuffer<double> end;
};

// Scratch reused across replays (no allocation once warm).
struct ReplayWorkspace {
  UninitBuffer<double> start, end;          // [node * window_lanes + lane]
  UninitBuffer<double> rendezvous;          // per lane of a window
  UninitBuffer<double> lane_max, lane_opt;  // per lane of a window
  std::vector<const double*> rows;          // per node, offset to the window
};

// The times of one window of lanes, for callers that reduce them on the fly
// instead of keeping them: (node v, lane lo + l) is at start[v * stride + l].
struct WindowTimes {
  size_t lo = 0, lanes = 0, stride = 0;
  const double* start = nullptr;
  const double* end = nullptr;
};
using WindowVisitor = std::function<void(const WindowTimes&)>;

// Replays `input`; fills `keep` with every start and end when not null, and
// calls `visit` (when set) with every window's times once it is replayed.
StepTimes Replay(const ReplayInput& input, ReplayWorkspace* workspace,
                 ReplayTimes* keep = nullptr,
                 const WindowVisitor& visit = nullptr);

// Convenience for dense costs laid out [node * num_lanes + lane].
std::vector<const double*> DenseRows(std::span<const double> cost,
                                     size_t num_nodes, size_t num_lanes);

}  // namespace strag::replay

#endif  // STRAG_SRC_REPLAY_REPLAY_ENGINE_H_
