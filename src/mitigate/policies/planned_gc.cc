// SPDX-License-Identifier: Apache-2.0
// planned_gc: disable automatic GC and collect on every rank at the same
// step boundary every N steps (reference: mitigations.md §3). The measured
// pauses are removed (each launch delay back to its op's median) and one
// synchronised collection of the pauses' median length g is added every N
// steps, amortised: g / N per step (the cost formula of §3.3). N is the
// ranks' own interval between pauses (the busiest rank's when one rank
// pauses more than the others), so that no rank builds up more garbage
// between collections than today: the peak memory stays where it is.
// Profiler traces name GC; what of it no launch delay holds ran inside a
// compute segment and comes off its duration.

#include <algorithm>
#include <cmath>

#include "base/median.h"
#include "base/str_format.h"
#include "mitigate/host_delays.h"
#include "mitigate/policies/policies.h"

namespace strag::mitigate {
namespace {

class PlannedGc final : public Policy {
 public:
  std::string_view name() const override { return "planned_gc"; }
  Family family() const override { return Family::kBalance; }

  Applicability Check(const JobView&, const Cells&) const override {
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string* why) const override {
    const whatif::PreparedTrace& t = job.trace;
    const HostDelays h = FindHostDelays(t, cells);
    const size_t steps = t.steps.size();
    DelayEvents events = EventsOf(h.pause_per_step, cells, steps);
    std::vector<double>& pauses = events.sizes;
    if (pauses.empty()) {
      *why =
          "no host pauses in the trace (no launch delay 5 ms above its "
          "op's median outside the input stalls)";
      return {};
    }
    const size_t count = pauses.size();
    const double g = Median(&pauses);
    // Pauses per worker and step; one collection every `every` steps: the
    // ranks' common interval when they pause alike (the busiest rank under
    // twice the mean), else the busiest rank's, so that no rank holds more
    // garbage between collections than today.
    const double rate = static_cast<double>(count) /
                        static_cast<double>(h.pause_per_step.size());
    std::vector<double> per_rank(cells.all().size(), 0.0);
    for (size_t at = 0; at < h.pause_per_step.size(); ++at) {
      if (h.pause_per_step[at] >= kHostDelayS) per_rank[at / steps] += 1;
    }
    const double busiest = *std::max_element(per_rank.begin(), per_rank.end());
    const double expected = rate * static_cast<double>(steps);
    const double interval =
        busiest < 2 * expected
            ? 1.0 / rate
            : std::floor(static_cast<double>(steps) / busiest);
    const auto every =
        static_cast<int64_t>(std::max(1.0, std::round(interval)));
    Proposal p;
    Rewrite& rw = p.rewrite;
    rw.launch_delay.assign(t.launch_delay.begin(), t.launch_delay.end());
    for (size_t slot = 0; slot < rw.launch_delay.size(); ++slot) {
      rw.launch_delay[slot] -= h.pause[slot];
    }
    if (std::any_of(h.pause_in_cost.begin(), h.pause_in_cost.end(),
                    [](float x) { return x > 0; })) {
      rw.cost.assign(t.cost.begin(), t.cost.end());
      for (size_t slot = 0; slot < rw.cost.size(); ++slot) {
        rw.cost[slot] -= h.pause_in_cost[slot];
      }
    }
    rw.added_step_s = g / static_cast<double>(every);
    p.action = StrFormat(
        "gc.disable(); gc.collect() on every rank every %lld steps "
        "(Megatron --manual-gc --manual-gc-interval %lld)",
        static_cast<long long>(every), static_cast<long long>(every));
    p.params = StrFormat("every=%lld,pause_ms=%.1f",
                         static_cast<long long>(every), g * 1e3);
    p.evidence = StrFormat(
        "%zu host pauses on %zu rank(s) (median %.1f ms, longest %.1f ms, "
        "%.1f ms per step in all), the busiest rank every %.1f steps; a "
        "synchronised collection costs %.1f ms every %lld steps",
        count, events.ranks.size(), g * 1e3, events.longest * 1e3,
        events.total / static_cast<double>(steps) * 1e3,
        static_cast<double>(steps) / std::max(busiest, 1.0), g * 1e3,
        static_cast<long long>(every));
    p.effects = RestartEffects(
        job.econ, Semantics::kIdentical,
        "the interval is the ranks' own, so memory peaks as today; a longer "
        "one saves more only if the memory growth between collections fits");
    std::vector<Proposal> out;
    out.push_back(std::move(p));
    return out;
  }
};

}  // namespace

std::unique_ptr<Policy> NewPlannedGc() { return std::make_unique<PlannedGc>(); }

}  // namespace strag::mitigate
