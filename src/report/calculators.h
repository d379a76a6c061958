// SPDX-License-Identifier: Apache-2.0
// The calculators' answers (`strag tail`, `strag cost`): the question as
// the user asked it, and what econ computes for it. Front-ends parse, call
// these, and render with report/render/calculators.h. Pure.

#ifndef STRAG_SRC_REPORT_CALCULATORS_H_
#define STRAG_SRC_REPORT_CALCULATORS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "econ/run_cost.h"
#include "econ/tail.h"

namespace strag::report {

// N iid workers whose step time follows `distribution` (text, e.g.
// "normal:100ms,5ms"); "slow" above `slow_above` (a duration text, e.g.
// "120ms"); optionally B backup workers.
struct TailQuestion {
  int64_t workers = 0;
  std::string distribution;
  std::optional<std::string> slow_above = {};
  std::optional<int64_t> backups = {};
};

// Backup workers: the step needs the first N of N + B; E[step], and the GPU
// time that costs beyond N x E[X].
struct BackupAnswer {
  int64_t count = 0;
  double expected_step_s = 0;
  double lost_gpu_seconds_per_step = 0;
};

struct TailAnswer {
  TailQuestion question;
  econ::Distribution dist;
  std::optional<double> slow_above_s;
  econ::TailSummary summary;
  std::optional<BackupAnswer> backups;
};

// kInvalidInput naming the part of the question that is wrong.
Result<TailAnswer> AnswerTail(TailQuestion question);

// What a run of `gpus` for `days` at slowdown S loses (econ/run_cost.h);
// price default kDefaultUsdPerGpuHour.
Result<econ::RunCost> AnswerCost(double slowdown, int64_t gpus, double days,
                                 std::optional<double> usd_per_gpu_hour);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_CALCULATORS_H_
