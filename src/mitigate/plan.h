// SPDX-License-Identifier: Apache-2.0
// Plan: the ranked mitigations of one job (the `strag.plan/1` contract,
// docs/formats/plan-json.md).

#ifndef STRAG_SRC_MITIGATE_PLAN_H_
#define STRAG_SRC_MITIGATE_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mitigate/policy.h"

namespace strag::mitigate {

// Another parameter of the same policy, priced the same way.
struct Alternative {
  std::string action, params;
  double step_s = 0;
  double net_gpu_hours = 0;
  bool within_noise = false;
};

struct PlanRow {
  std::string policy;
  Family family = Family::kBalance;
  std::string action, params, evidence;
  bool bound = false;
  std::string bound_note;
  double step_s = 0;          // predicted mean step, host time included
  double slowdown_after = 0;  // predicted S (no launch delays / T_ideal)
  double gain_step_s = 0;     // current step - predicted step
  double recovered = 0;       // gain / (current step - ideal step)
  // GPU-hours saved per hour the job runs (gross of one-off costs; extra
  // GPUs and dropped tokens counted), then over the horizon net of the
  // one-off costs, in GPU-hours and dollars.
  double gpu_hours_per_day = 0;
  double net_gpu_hours = 0;
  double net_usd = 0;
  double break_even_hours = 0;  // one-off cost / saving rate; 0: none
  bool within_noise = false;    // the gain is inside the error band
  SideEffects effects;
  // The policy's other proposals (e.g. other backup counts), in the order
  // proposed; the row is the one with the most net GPU-hours.
  std::vector<Alternative> alternatives;
};

struct SkippedPolicy {
  std::string policy;
  Family family = Family::kBalance;
  std::string reason;
};

struct Plan {
  // Why no fix is priced ("" when they are): the input cannot carry a plan
  // (too few ranks traced). Then nothing else is set.
  std::string withheld;
  double step_s = 0;      // current mean step (replayed with host time)
  double replayed_s = 0;  // current, without launch delays (T)
  double ideal_s = 0;     // T_ideal
  double slowdown = 0;    // T / T_ideal
  double band_s = 0;      // the replay's error band on a gain
  std::string band_note;  // how it was found
  int64_t gpus = 0;
  double usd_per_gpu_hour = 0;
  double horizon_hours = 0;
  double checkpoint_interval_s = 0, restart_s = 0;
  int64_t token_cap = 0;               // JobView::token_cap
  std::vector<PlanRow> rows;           // ranked, best first
  std::vector<SkippedPolicy> skipped;  // policies that do not apply
  uint64_t replayed_ops = 0;
};

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_PLAN_H_
