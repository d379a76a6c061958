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

// Renders `steps` (in the given order) as {"displayTimeUnit": "ms",
// "traceEvents": [...], "metadata": {...}}, one event per line, accepted
// whole by Perfetto's JSON importer (docs/formats/perfetto.md; checked by
// tests/perfetto/check_perfetto.py).
//
// Layout contract:
// - One process per traced worker: pid = global rank + 1 (pid 0 is the idle
//   process in Perfetto), named "rank R (dp D, stage S)", sorted by rank.
//   Its threads (tracks), numbered from 1 in this order: "actual compute",
//   "actual comm", "ideal compute", "ideal comm" (actual: the replay without
//   launch delays), each split into lanes ("actual comm 2", ...) where its
//   ops overlap in time: an op goes to the lowest lane free at its start, so
//   the complete slices of one track never overlap (Perfetto drops a slice
//   that overlaps another partially).
// - Every op is a complete ("X") slice in both replays: name is the op type
//   ("forward-compute #3" with the microbatch, when it has one), cat
//   "compute" or "comm", args {step, microbatch, seq_id, critical}.
// - ts/dur are microseconds, rounded to whole nanoseconds (Perfetto's own
//   resolution). Steps sit one after another on one axis: step k starts
//   where step k-1's longer replay (actual or ideal) ended, plus a gap of a
//   tenth of that step's span. The axis ends at 9e18 ns (int64 ns with room
//   for the importer's arithmetic): later times are clipped to it; a NaN is
//   0. No arithmetic overflows, whatever the input.
// - Every op on the actual critical path whose `waited_for` is another op
//   gets a v1 flow ("s" bound to the waited-for slice, "f" with "bp":"e" to
//   the waiting one, cat "critical-path") on their actual tracks; flow ids
//   are unique in the file. A wait for a dependency leaves 1 ns before the
//   dependency's end; a wait at a rendezvous (the waited-for member overlaps
//   the waiting op: it arrived later) leaves 1 ns after the late member's
//   start. The arrow lands 1 ns after the waiting op's start, or at the
//   flow's start if later: no flow ends before it starts. A flow endpoint
//   on a slice shorter than 2 ns may bind to a neighbour (Perfetto binds
//   flows to the slice open at their ts); such slices are below any trace's
//   resolution in practice.
// - One global instant per step marks its start.
// - Events after the metadata are in time order; at one ts: the step
//   marker, slices, flow starts, flow ends.
// Deterministic: the same input gives byte-identical output. Cost
// O(total ops log ops + workers log workers).
std::string RenderPerfettoTimelines(const std::vector<whatif::Timeline>& steps,
                                    std::string_view title);

// The report's timelines (ReportOptions::timelines), titled by its source.
std::string RenderPerfettoJson(const Report& report);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_PERFETTO_JSON_H_
