// SPDX-License-Identifier: Apache-2.0
// async_staleness: bounded-staleness updates (SSP; reference:
// mitigations.md §4): DP replicas stop waiting for each other at the DP
// collectives. Replayed with every replica its own sync domain; a global
// step then takes dp / sum(1 / T_replica) (the replicas' rates add up).
// That is the bound of unbounded staleness; a small bound recovers most of
// it. Changes the optimisation.

#include "base/str_format.h"
#include "mitigate/policies/policies.h"
#include "mitigate/worker_work.h"

namespace strag::mitigate {
namespace {

constexpr int kStaleness = 2;

class AsyncStaleness final : public Policy {
 public:
  std::string_view name() const override { return "async_staleness"; }
  Family family() const override { return Family::kDropAsync; }

  Applicability Check(const JobView& job, const Cells&) const override {
    std::string missing = ReplicaLanesMissing(job.trace);
    if (!missing.empty()) return {false, missing};
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells&,
                                std::string*) const override {
    Proposal p;
    p.rewrite.lane_per_domain = true;
    p.action = StrFormat(
        "bounded-staleness updates (SSP, staleness %d): DP replicas no "
        "longer wait for each other at the gradient collectives",
        kStaleness);
    p.params = StrFormat("staleness=%d", kStaleness);
    p.evidence = StrFormat("%d DP replicas wait for the slowest every step",
                           job.trace.dp);
    p.bound = true;
    p.bound_note =
        "no replica waits for another (unbounded staleness); a small bound "
        "recovers most of it";
    p.effects = RestartEffects(
        job.econ, Semantics::kStaleness,
        StrFormat(
            "changes the optimisation: updates from parameters up to %d steps "
            "old; no mainstream LLM framework supports it",
            kStaleness));
    std::vector<Proposal> out;
    out.push_back(std::move(p));
    return out;
  }
};

}  // namespace

std::unique_ptr<Policy> NewAsyncStaleness() {
  return std::make_unique<AsyncStaleness>();
}

}  // namespace strag::mitigate
