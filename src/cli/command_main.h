// SPDX-License-Identifier: Apache-2.0
// The strag command line as a function: `strag` (main.cc) and `strag-mpi`
// (src/dist/mpi_main.cc, the processes of one analysis under mpirun) run it.

#ifndef STRAG_SRC_CLI_COMMAND_MAIN_H_
#define STRAG_SRC_CLI_COMMAND_MAIN_H_

namespace strag::cli {

// Runs `strag ARGS...`; returns the exit code (0, 1: a failure of the
// machine or a bug, 2: bad input or usage).
int Main(int argc, char** argv);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_COMMAND_MAIN_H_
