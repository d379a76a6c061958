// SPDX-License-Identifier: Apache-2.0
// The strag command line as a function: `strag` (main.cc) and `strag-mpi`
// (src/dist/mpi_main.cc, the processes of one analysis under mpirun) run it.
// `serve`, `history` and `simulate --live` speak HTTP and SQLite: they are
// in strag-serve (serve_main.cc), a binary beside strag that strag hands
// them over to, so that every other command starts without loading
// cpp-httplib and the OpenSSL it links (~5 ms of each start, measured).

#ifndef STRAG_SRC_CLI_COMMAND_MAIN_H_
#define STRAG_SRC_CLI_COMMAND_MAIN_H_

#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace strag::cli {

// Runs `strag ARGS...`; returns the exit code (0, 1: a failure of the
// machine or a bug, 2: bad input or usage).
int Main(int argc, char** argv);

// A command: its usage text and its run (null: strag-serve's, which
// strag hands over to).
struct Command {
  const char* name;
  std::string (*usage)();
  Status (*run)(const std::vector<std::string>&);
};

// The command of `commands` named `name`, or null.
const Command* FindCommand(std::span<const Command> commands,
                           const std::string& name);

// One command with its arguments: its usage for --help, else its run, with
// the error line (the lead process's) and the exit code of Main.
int RunCommand(const Command& command, const std::vector<std::string>& args);

// `name` in the folder of this process's binary.
std::string BesideThisBinary(const std::string& name);

// Replaces this process by `binary` (beside this one) with the same
// arguments; returns only when it cannot (after saying so): exit code 1.
int HandOver(const std::string& binary, char** argv);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_COMMAND_MAIN_H_
