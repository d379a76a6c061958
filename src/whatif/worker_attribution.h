// SPDX-License-Identifier: Apache-2.0
// UnfixEachWorker: the exact "un-fix only this worker" step times of every
// traced worker at once (issue 15), instead of the published approximation
// min(S_dp[d], S_pp[p]) of WorkerScore.
//
// For worker w = (dp rank d, stage p) the scenario is the one `--unfix
// rank=R` replays (analysis.cc, ScenarioRunner::Run(Base::kIdeal, ...)):
// every op at its ideal cost except w's ops (the nodes of stage p in every
// instance (step, d)), which keep their traced cost; no launch delays; the
// step time is the replayed span. S_w = mean(T^{-w}) / mean(T_ideal).
//
// Usage (inside Analyze, where both cost arrays are at hand):
//   ASSIGN_OR_RETURN(WorkerUnfix u,
//                    UnfixEachWorker(t, traced.cost_nd, ideal.cost, {}));
//   u.mean_step_s[k];  // T^{-w} of t.workers[k]

#ifndef STRAG_SRC_WHATIF_WORKER_ATTRIBUTION_H_
#define STRAG_SRC_WHATIF_WORKER_ATTRIBUTION_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/huge_page_allocator.h"
#include "base/status.h"
#include "whatif/prepared_trace.h"

namespace strag::whatif {

// The two cost arrays the analysis hands its counterfactuals
// (ScenarioRunner::SetCosts in analysis.cc step 5), for callers that only
// have the trace and the pooled ideal values (WhatIfResult::ideal_node_cost).
struct UnfixCosts {
  // Per slot [node * instances + instance]: D_nd, the duration replayed
  // without launch delays (plain ops), or the transfer time (comm ops), s.
  BigVector<double> traced;
  // Per node: the ideal replay's duration end - start (plain ops; not always
  // bit-equal to the pooled value), or the pooled transfer time (comm), s.
  std::vector<double> ideal;
};

// Recomputes the analysis' steps 2-3 inputs: one traced replay without
// launch delays and one ideal lane. Cost O(nodes x instances).
UnfixCosts DeriveUnfixCosts(const PreparedTrace& trace,
                            std::span<const double> ideal_node_cost);

struct UnfixEachWorkerOptions {
  // Threads for the independent batches (0: one per core). Results do not
  // depend on it.
  size_t threads = 1;
  // Also count the (op, lane) times that differ from the ideal replay: the
  // work a sparse propagation (wait-states §4.5) would do. Costs a compare
  // per replayed op.
  bool measure_cone = false;
};

struct WorkerUnfix {
  // Per worker, in PreparedTrace::workers order: mean step time (numpy's
  // pairwise mean over the steps, as Explain's t_add), s. The step time is
  // the span (max end - min start), as `--unfix` reports it.
  std::vector<double> mean_step_s;
  // [worker * steps + step]: that step's span, s.
  std::vector<double> step_s;
  // The same with T_opt (the optimizer's end), the step time of the
  // decompositions S_dp / S_pp / S_t (analysis.cc Decompose).
  std::vector<double> mean_opt_s;
  std::vector<double> step_opt_s;
  uint64_t replayed_ops = 0;  // ops x lanes replayed
  uint64_t changed_ops = 0;   // with measure_cone: ops x lanes off ideal
};

// Exact: every value is bit-identical to ScenarioRunner::Run(Base::kIdeal,
// SelectWorkers(trace, {w})) with the same costs (see the .cc for why).
// Cost O(2 x pp x nodes x instances) replayed ops, vectorised over lanes.
// Fails (kInvalidInput) when the arrays do not match the trace.
Result<WorkerUnfix> UnfixEachWorker(const PreparedTrace& trace,
                                    std::span<const double> traced_cost,
                                    std::span<const double> ideal_cost,
                                    const UnfixEachWorkerOptions& options = {});

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_WORKER_ATTRIBUTION_H_
