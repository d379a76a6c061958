// SPDX-License-Identifier: Apache-2.0
// MakePlan: every policy checked, every proposal replayed, priced and
// ranked (reference: mitigations.md §7.2, §7.5).
//
// Prediction: a proposal's step is today's observed step plus the change of
// the blocking replay (no launch delays, as S) plus the change of the host
// time (the traced costs replayed with its launch delays) plus what it adds
// per step (a planned collection).
//
// Ranking: a gain inside the error band is "within noise" and goes after
// every real one; a fix that changes the training (dropped work, stale
// updates) goes after every fix that keeps it (reference: mitigations.md
// §4.4); then by net GPU-hours over the horizon; gains within one
// band of each other are ties, broken toward the fix that keeps the
// training semantics, then the playbook's family order (balance, backups,
// drop/async, operational), then fewer extra GPUs, then no restart.
//
// Cost: per proposal one replay of the job (two when it rewrites launch
// delays), policies on `threads` workers; results do not depend on it.

#ifndef STRAG_SRC_MITIGATE_PLANNER_H_
#define STRAG_SRC_MITIGATE_PLANNER_H_

#include <cstddef>
#include <vector>

#include "base/status.h"
#include "mitigate/job_view.h"
#include "mitigate/plan.h"

namespace strag::mitigate {

// The smallest gain the replay can tell from noise, as a share of the
// step: the published replay's median error against real runs (1.3%).
inline constexpr double kReplayErrorShare = 0.013;

Result<Plan> MakePlan(const JobView& job, size_t threads = 0);

// The ranking rule above on priced rows; net gains closer than
// `tie_gpu_hours` are a tie.
void RankRows(double tie_gpu_hours, std::vector<PlanRow>* rows);

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_PLANNER_H_
