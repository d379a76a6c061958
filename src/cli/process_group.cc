// SPDX-License-Identifier: Apache-2.0
#include "cli/process_group.h"

namespace strag::cli {
namespace {
Collective* g_collective = nullptr;
}  // namespace

void SetProcessCollective(Collective* c) { g_collective = c; }
Collective* ProcessCollective() { return g_collective; }
bool IsLeadProcess() {
  return g_collective == nullptr || g_collective->rank() == 0;
}

}  // namespace strag::cli
