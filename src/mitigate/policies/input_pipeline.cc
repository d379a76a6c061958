// SPDX-License-Identifier: Apache-2.0
// input_pipeline: remove the input stalls (reference: mitigations.md §6,
// data loading): the launch delay of a worker's first forward of a step
// (or the host time the trace names as data loading) back to its op's
// median, as more DataLoader workers and prefetching would.

#include <algorithm>

#include "base/str_format.h"
#include "mitigate/host_delays.h"
#include "mitigate/policies/policies.h"

namespace strag::mitigate {
namespace {

class InputPipeline final : public Policy {
 public:
  std::string_view name() const override { return "input_pipeline"; }
  Family family() const override { return Family::kOperational; }

  Applicability Check(const JobView&, const Cells&) const override {
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string* why) const override {
    const whatif::PreparedTrace& t = job.trace;
    const HostDelays h = FindHostDelays(t, cells);
    const size_t steps = t.steps.size();
    const DelayEvents events = EventsOf(h.stall_per_step, cells, steps);
    const size_t stalls = events.sizes.size();
    if (stalls == 0) {
      *why =
          "no input stalls (every first forward starts within 5 ms of "
          "its median, no named data loading)";
      return {};
    }
    Proposal p;
    p.rewrite.launch_delay.assign(t.launch_delay.begin(), t.launch_delay.end());
    for (size_t slot = 0; slot < h.stall.size(); ++slot) {
      p.rewrite.launch_delay[slot] -= h.stall[slot];
    }
    std::string where;
    size_t shown = 0;
    for (int32_t r : events.ranks) {
      if (shown++ == 4) {
        where += ", ...";
        break;
      }
      where += (where.empty() ? "" : ", ") + std::to_string(r);
    }
    p.action = StrFormat(
        "feed the input faster: more DataLoader workers and a larger "
        "prefetch_factor, pinned memory (stalls on rank(s) %s)",
        where.c_str());
    p.params = "stalls=" + std::to_string(stalls);
    p.evidence = StrFormat(
        "%zu input stalls on %zu rank(s) (longest %.1f ms, %.1f ms per step "
        "in all): data loading the trace names, or delays of a step's first "
        "forward",
        stalls, events.ranks.size(), events.longest * 1e3,
        events.total / static_cast<double>(steps) * 1e3);
    p.effects =
        RestartEffects(job.econ, Semantics::kIdentical,
                       "more loader workers need host memory and CPU cores");
    std::vector<Proposal> out;
    out.push_back(std::move(p));
    return out;
  }
};

}  // namespace

std::unique_ptr<Policy> NewInputPipeline() {
  return std::make_unique<InputPipeline>();
}

}  // namespace strag::mitigate
