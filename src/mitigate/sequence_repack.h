// SPDX-License-Identifier: Apache-2.0
// The proposal of the two sequence policies when the trace has sequence
// lengths: every step's sequences repacked (base/partition.h
// RepackSequences, on the fitted cost) and the compute costs rewritten
// through the SequenceModel.

#ifndef STRAG_SRC_MITIGATE_SEQUENCE_REPACK_H_
#define STRAG_SRC_MITIGATE_SEQUENCE_REPACK_H_

#include <string>

#include "mitigate/policy.h"

namespace strag::mitigate {

// Why the trace's sequence lengths cannot be used ("" when they can).
std::string SequencesMissing(const whatif::PreparedTrace& trace);

// `across_replicas`: move sequences between DP replicas (sequence_balance),
// else only repack each replica's microbatches (microbatch_packing). The
// token cap is the largest traced microbatch's tokens (memory as today).
Proposal RepackProposal(const JobView& job, const Cells& cells,
                        bool across_replicas);

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_SEQUENCE_REPACK_H_
