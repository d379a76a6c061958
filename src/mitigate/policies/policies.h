// SPDX-License-Identifier: Apache-2.0
// The policies, one file each (policies/<name>.cc).

#ifndef STRAG_SRC_MITIGATE_POLICIES_POLICIES_H_
#define STRAG_SRC_MITIGATE_POLICIES_POLICIES_H_

#include <memory>

#include "mitigate/policy.h"

namespace strag::mitigate {

std::unique_ptr<Policy> NewSequenceBalance();
std::unique_ptr<Policy> NewMicrobatchPacking();
std::unique_ptr<Policy> NewStageRepartition();
std::unique_ptr<Policy> NewPlannedGc();
std::unique_ptr<Policy> NewDpResplit();
std::unique_ptr<Policy> NewBackupWorkers();
std::unique_ptr<Policy> NewDropSlowest();
std::unique_ptr<Policy> NewAsyncStaleness();
std::unique_ptr<Policy> NewEvictNode();
std::unique_ptr<Policy> NewInputPipeline();

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_POLICIES_POLICIES_H_
