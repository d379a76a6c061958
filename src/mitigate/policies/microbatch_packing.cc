// SPDX-License-Identifier: Apache-2.0
// microbatch_packing: build each rank's microbatches by cost under a token
// cap (reference: mitigations.md §1.3): the rank keeps its sequences, LPT
// spreads them over its microbatches on the fitted a*s + b*s^2, no
// microbatch past today's largest in tokens. What a pipeline's bubbles see
// (the largest microbatch), without moving data between ranks.

#include "mitigate/policies/policies.h"
#include "mitigate/sequence_repack.h"

namespace strag::mitigate {
namespace {

class MicrobatchPacking final : public Policy {
 public:
  std::string_view name() const override { return "microbatch_packing"; }
  Family family() const override { return Family::kBalance; }

  Applicability Check(const JobView& job, const Cells&) const override {
    const std::string missing = SequencesMissing(job.trace);
    if (!missing.empty()) return {false, missing};
    if (job.trace.sequences.microbatches < 2) {
      return {false, "one microbatch per step: nothing to repack"};
    }
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string*) const override {
    std::vector<Proposal> out;
    out.push_back(RepackProposal(job, cells, false));
    return out;
  }
};

}  // namespace

std::unique_ptr<Policy> NewMicrobatchPacking() {
  return std::make_unique<MicrobatchPacking>();
}

}  // namespace strag::mitigate
