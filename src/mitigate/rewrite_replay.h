// SPDX-License-Identifier: Apache-2.0
// RewriteReplayer: replays a proposal's rewrite (or the trace itself) with
// the engine of `strag analyze`, and gives the step times the planner
// compares: the blocking part (no launch delays, as S) and the host part
// (traced costs with rewritten launch delays) separately, because traced
// launch delays also hold waits the dependency model does not see and
// would keep a fixed straggler's step long.

#ifndef STRAG_SRC_MITIGATE_REWRITE_REPLAY_H_
#define STRAG_SRC_MITIGATE_REWRITE_REPLAY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "mitigate/policy.h"
#include "replay/replay_engine.h"
#include "whatif/prepared_trace.h"

namespace strag::mitigate {

class RewriteReplayer {
 public:
  // `trace` must outlive the replayer.
  explicit RewriteReplayer(const whatif::PreparedTrace& trace)
      : trace_(trace) {}

  // Per step, T_opt (s) of the rewrite's costs, lanes and quorum replayed
  // without launch delays; with a lane per domain, the time of one global
  // step when the replicas' rates add up. Arrays that do not match the
  // lanes are a programmer error (checked).
  std::vector<double> Replayed(const Rewrite& rewrite);
  // Per step, T_opt of the traced costs replayed with these launch delays
  // (layout of the trace's; empty: the traced ones).
  std::vector<double> WithDelays(std::span<const float> launch_delay);
  // T_opt of one step with every op at `ideal_node_cost` (no delays).
  double IdealStep(std::span<const double> ideal_node_cost);

  uint64_t replayed_ops() const { return replayed_ops_; }

 private:
  std::vector<double> Execute(std::span<const double> cost, size_t lanes,
                              size_t lanes_per_domain,
                              std::span<const float> launch_delay,
                              uint32_t quorum);

  const whatif::PreparedTrace& trace_;
  replay::ReplayWorkspace workspace_;
  uint64_t replayed_ops_ = 0;
};

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_REWRITE_REPLAY_H_
