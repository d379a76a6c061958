// SPDX-License-Identifier: Apache-2.0
// strag-mpi: strag's command line in each process of `mpirun -n K`
// (`mpirun -n K strag ...` hands over to it). The processes share the
// analysis's replays (whatif/analysis.h, collective); the lead one prints
// and writes the outputs, identical to one process's.

#include <mpi.h>

#include "cli/command_main.h"
#include "cli/process_group.h"
#include "dist/mpi_collective.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  {
    strag::dist::MpiCollective world;
    strag::cli::SetProcessCollective(&world);
    code = strag::cli::Main(argc, argv);
    strag::cli::SetProcessCollective(nullptr);
  }
  MPI_Finalize();
  return code;
}
