// SPDX-License-Identifier: Apache-2.0
// Input checks that no diagnosis may rest on a failed input: profiler ranks
// whose times are in another unit, a clock fit that explains nothing, and
// job metadata that contradicts the trace.
//
// Each check returns the problem in one sentence (naming the rank, the
// field and both values), or "" when there is none. Pure: the report's
// input builders decide whether a problem is a warning, an error, or a
// reason to withhold the diagnosis.

#ifndef STRAG_SRC_REPORT_INPUT_CHECKS_H_
#define STRAG_SRC_REPORT_INPUT_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/input_notes.h"
#include "trace/job_meta.h"
#include "trace/rank_trace.h"
#include "whatif/prepared_trace.h"

namespace strag::report {

// A synchronous job's ranks share every step's barriers, so their step
// spans agree to well within this factor; a rank beyond it has its times in
// another unit (a trace in ns among traces in us is 1000x off).
inline constexpr double kStepSpanRatioLimit = 100;

// A clock fit whose collectives still end this far apart (p99, as a share
// of the median step), or whose worst collective ends more than a whole
// step apart, has not found the clocks: the times are not comparable.
inline constexpr double kResidualP99StepShare = 0.25;

// The median over ranks of each rank's median step span (ns); 0 without
// steps.
int64_t MedianStepSpanNs(const std::vector<trace::RankTrace>& ranks);

// "rank 1: its steps last 1000x as long as the other ranks' (26.4 s vs
// 26.4 ms): its ts and dur look like nanoseconds where theirs are
// microseconds", or "".
std::string UnitMismatch(const std::vector<trace::RankTrace>& ranks);

// The clock fit's residual against the step, or "".
std::string ImplausibleClockFit(const ClockNotes& clock,
                                int64_t median_step_ns);

// The largest world strag prices and names ranks in (ranks are int32).
inline constexpr int64_t kMaxWorldSize = (int64_t{1} << 31) - 1;

// The metadata (file or flags) against the trace: warnings for what the
// analysis survives by using the trace (a dp or pp degree the trace does
// not have), an error naming the field and both values for what would
// change the cost or the scope (a world size that dp x pp x tp x cp
// contradicts, a rank at or past the world size, a world past
// kMaxWorldSize). `notes` is null for an ops CSV.
Result<std::vector<std::string>> CheckMeta(const trace::JobMeta& meta,
                                           const whatif::PreparedTrace& trace,
                                           const InputNotes* notes);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_INPUT_CHECKS_H_
