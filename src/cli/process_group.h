// SPDX-License-Identifier: Apache-2.0
// The processes running one command together (strag-mpi under mpirun):
// every process analyses its share of the steps, only the lead one (0)
// prints and writes files. Alone (plain `strag`): no collective, lead.

#ifndef STRAG_SRC_CLI_PROCESS_GROUP_H_
#define STRAG_SRC_CLI_PROCESS_GROUP_H_

#include "base/collective.h"

namespace strag::cli {

// Set once by strag-mpi's main before the command runs; null alone.
void SetProcessCollective(Collective* c);
Collective* ProcessCollective();
bool IsLeadProcess();

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_PROCESS_GROUP_H_
