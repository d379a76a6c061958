// SPDX-License-Identifier: Apache-2.0
#include "report/calculators.h"

#include <cmath>
#include <string>
#include <utility>

#include "report/report.h"

namespace strag::report {

Result<TailAnswer> AnswerTail(TailQuestion question) {
  TailAnswer a;
  ASSIGN_OR_RETURN(a.dist, econ::ParseDistribution(question.distribution));
  if (question.slow_above) {
    auto seconds = econ::ParseDuration(*question.slow_above);
    if (!seconds.ok()) return seconds.status().WithContext("flag --slow-above");
    a.slow_above_s = *seconds;
  }
  a.summary = econ::SummarizeTail(a.dist, question.workers, a.slow_above_s);
  // A number too large for a double is no answer: say so, never print inf.
  const econ::TailSummary& t = a.summary;
  if (!std::isfinite(t.mean_s) || !std::isfinite(t.expected_max_s) ||
      !std::isfinite(t.std_max_s) ||
      !std::isfinite(t.lost_gpu_seconds_per_step)) {
    return InvalidInput("the distribution \"" + question.distribution +
                        "\" gives step times too large to compute (they "
                        "overflow a double)");
  }
  if (question.backups) {
    BackupAnswer b;
    b.count = *question.backups;
    b.expected_step_s =
        econ::ExpectedWithBackups(a.dist, question.workers, b.count);
    b.lost_gpu_seconds_per_step =
        static_cast<double>(question.workers + b.count) * b.expected_step_s -
        static_cast<double>(question.workers) * a.summary.mean_s;
    if (!std::isfinite(b.expected_step_s) ||
        !std::isfinite(b.lost_gpu_seconds_per_step)) {
      return InvalidInput("with " + std::to_string(b.count) +
                          " backups the step time overflows a double");
    }
    a.backups = b;
  }
  a.question = std::move(question);
  return a;
}

Result<econ::RunCost> AnswerCost(double slowdown, int64_t gpus, double days,
                                 std::optional<double> usd_per_gpu_hour) {
  return econ::ComputeRunCost(slowdown, gpus, days,
                              usd_per_gpu_hour.value_or(kDefaultUsdPerGpuHour));
}

}  // namespace strag::report
