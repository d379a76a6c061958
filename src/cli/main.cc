// SPDX-License-Identifier: Apache-2.0
// strag: find, explain and price stragglers in synchronous training.
//
// Started by mpirun with several processes (`mpirun -n K strag analyze
// ...`), strag hands over to strag-mpi beside it (built where MPI is
// found), whose processes share the analysis: the binary itself does not
// link MPI.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/command_main.h"

namespace {

// The size of the MPI job that started this process (OpenMPI, MPICH or
// Slurm's PMI), 0 when not started by a launcher.
long LauncherSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::strtol(v, nullptr, 10);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (LauncherSize() > 1) {
    const std::string mpi = strag::cli::BesideThisBinary("strag-mpi");
    execv(mpi.c_str(), argv);
    std::fprintf(stderr,
                 "strag: error: started by an MPI launcher with %ld processes, "
                 "but %s is missing (this build found no MPI: install "
                 "libopenmpi-dev and rebuild, or run one process)\n",
                 LauncherSize(), mpi.c_str());
    return 2;
  }
  return strag::cli::Main(argc, argv);
}
