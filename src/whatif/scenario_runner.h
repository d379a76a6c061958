// SPDX-License-Identifier: Apache-2.0
// ScenarioRunner: replays "traced everywhere except X" and "ideal everywhere
// except X" for any selection X, with the fewest lanes that are exact.
//
// DP replicas interact only at DP collectives, and an instance whose ops are
// all idealised is the same in every DP replica of a step, so such instances
// are folded into one lane per step (replay_engine.h). Un-fixing one DP rank
// then replays 2 lanes per step instead of dp.

#ifndef STRAG_SRC_WHATIF_SCENARIO_RUNNER_H_
#define STRAG_SRC_WHATIF_SCENARIO_RUNNER_H_

#include <cstdint>
#include <span>
#include <vector>

#include "base/uninit_buffer.h"
#include "replay/replay_engine.h"
#include "whatif/prepared_trace.h"
#include "whatif/selection.h"

namespace strag::whatif {

enum class Base {
  kTraced,  // traced values, X idealised: "fix only X"
  kIdeal,   // ideal values, X traced: "un-fix only X"
};

class ScenarioRunner {
 public:
  // `trace` must outlive the runner (or its next Retarget).
  explicit ScenarioRunner(const PreparedTrace& trace) : trace_(&trace) {}
  ScenarioRunner(const ScenarioRunner&) = delete;
  ScenarioRunner& operator=(const ScenarioRunner&) = delete;
  ScenarioRunner(ScenarioRunner&&) = default;

  // Replays `trace` from now on (another window of steps of the same job:
  // same model), keeping the workspace. Set the costs again.
  void Retarget(const PreparedTrace& trace) {
    trace_ = &trace;
    traced_cost_ = {};
    ideal_cost_ = {};
  }

  // The two values of every op: traced per (node, instance) slot, ideal per
  // node. Both spans must outlive their use; the workspace is kept.
  void SetCosts(std::span<const double> traced_cost,
                std::span<const double> ideal_cost) {
    traced_cost_ = traced_cost;
    ideal_cost_ = ideal_cost;
  }

  // Step times (one per step) of the scenario.
  replay::StepTimes Run(Base base, const Selection& x);

  // Replays every instance (lane = instance) with the traced costs and
  // `launch_delay` (empty: zero); `visit` sees every window's times (they are
  // not kept).
  replay::StepTimes RunTraced(std::span<const float> launch_delay,
                              const replay::WindowVisitor& visit);
  // Replays one lane with the ideal costs (its step times are those of every
  // step); times() then holds that lane's start and end of every op.
  replay::StepTimes RunIdealLane();

  const replay::ReplayTimes& times() const { return times_; }
  // Replayed ops so far (ops x lanes), for throughput figures.
  uint64_t replayed_ops() const { return replayed_ops_; }

 private:
  void BuildLanes(Base base, const Selection& x);
  void IdentityLanes();
  replay::StepTimes Execute(std::span<const float> launch_delay,
                            replay::ReplayTimes* keep,
                            const replay::WindowVisitor& visit = nullptr);

  const PreparedTrace* trace_;
  std::span<const double> traced_cost_;
  std::span<const double> ideal_cost_;
  std::vector<int64_t> lane_instance_;  // -1: folded all-ideal lane
  std::vector<uint32_t> sync_offsets_;
  std::vector<const double*> rows_;  // per node: its cost row, or null
  std::vector<double> zeros_;        // ideal values before SetCosts has them
  UninitBuffer<double> cost_;        // rows that mix traced and ideal lanes
  replay::ReplayWorkspace workspace_;
  replay::ReplayTimes times_;
  uint64_t replayed_ops_ = 0;
};

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_SCENARIO_RUNNER_H_
