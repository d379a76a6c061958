// SPDX-License-Identifier: Apache-2.0
#include "mitigate/policy.h"

#include "mitigate/policies/policies.h"

namespace strag::mitigate {

std::string_view FamilyName(Family family) {
  switch (family) {
    case Family::kBalance:
      return "balance";
    case Family::kBackup:
      return "backup";
    case Family::kDropAsync:
      return "drop_async";
    case Family::kOperational:
      return "operational";
  }
  return "balance";
}

std::string_view SemanticsName(Semantics semantics) {
  switch (semantics) {
    case Semantics::kIdentical:
      return "identical";
    case Semantics::kDataOrder:
      return "data_order";
    case Semantics::kBatchNoise:
      return "batch_noise";
    case Semantics::kStaleness:
      return "staleness";
  }
  return "identical";
}

std::vector<std::unique_ptr<Policy>> AllPolicies() {
  std::vector<std::unique_ptr<Policy>> out;
  out.push_back(NewSequenceBalance());
  out.push_back(NewMicrobatchPacking());
  out.push_back(NewStageRepartition());
  out.push_back(NewPlannedGc());
  out.push_back(NewDpResplit());
  out.push_back(NewBackupWorkers());
  out.push_back(NewDropSlowest());
  out.push_back(NewAsyncStaleness());
  out.push_back(NewEvictNode());
  out.push_back(NewInputPipeline());
  return out;
}

}  // namespace strag::mitigate
