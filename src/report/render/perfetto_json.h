// SPDX-License-Identifier: Apache-2.0
// Perfetto view (`--perfetto FILE`): the replayed ("actual", no launch
// delays) and the ideal timelines of chosen steps as Chrome trace-event JSON,
// loadable in ui.perfetto.dev and chrome://tracing. Format notes:
// ../shared/reference/wait-states-and-counterfactuals.md §2.

#ifndef STRAG_SRC_REPORT_RENDER_PERFETTO_JSON_H_
#define STRAG_SRC_REPORT_RENDER_PERFETTO_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "report/report.h"
#include "whatif/timeline.h"

namespace strag::report {

// Renders `steps` (in the given order) as {"traceEvents": [...],
// "displayTimeUnit": "ms", "metadata": {...}}, one event per line.
//
// Layout contract:
// - One process per traced worker: pid = global rank + 1 (pid 0 is the idle
//   process in Perfetto), named "rank R (dp D, stage S)", sorted by rank.
//   Thread 1 is the actual replay, thread 2 the ideal one.
// - Every op is a complete ("X") slice on both threads: name is the op type
//   ("forward-compute #3" with the microbatch, when it has one), cat
//   "compute" or "comm", args {step, microbatch, seq_id, critical}.
// - ts/dur are microseconds, rounded to whole nanoseconds (Perfetto's own
//   resolution). Steps sit one after another on one axis: step k starts
//   where step k-1's longer replay (actual or ideal) ended, plus a gap of a
//   tenth of that step's span.
// - Every op on the actual critical path whose `waited_for` is another op
//   gets a v1 flow ("s" on the waited-for slice, "f" with "bp":"e" on the
//   waiting slice, cat "critical-path") on the actual thread; flow ids are
//   unique in the file. A flow endpoint on a slice shorter than 2 ns may
//   bind to a neighbour (Perfetto binds flows to the slice open at their
//   ts); such slices are below any trace's resolution in practice.
// - One global instant per step marks its start.
// Deterministic: the same input gives byte-identical output. Cost
// O(total ops + workers log workers).
std::string RenderPerfettoTimelines(const std::vector<whatif::Timeline>& steps,
                                    std::string_view title);

// The report's timelines (ReportOptions::timelines), titled by its source.
std::string RenderPerfettoJson(const Report& report);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_PERFETTO_JSON_H_
