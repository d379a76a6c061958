// SPDX-License-Identifier: Apache-2.0
// strag-serve: the commands of strag that speak HTTP and SQLite (`serve`,
// `history`, `simulate --live`), in a binary of their own beside strag,
// which hands them over (command_main.h): strag itself then starts without
// loading cpp-httplib, OpenSSL and SQLite. Run through strag; its arguments
// are strag's.

#include <cstdio>
#include <string>
#include <vector>

#include "cli/command_main.h"
#include "cli/serve_command.h"
#include "cli/simulate_command.h"

namespace {

std::string ServeHelp() { return strag::cli::kServeUsage; }
std::string HistoryHelp() { return strag::cli::kHistoryUsage; }
std::string SimulateHelp() { return strag::cli::SimulateUsage(); }

constexpr strag::cli::Command kCommands[] = {
    {"serve", ServeHelp, strag::cli::RunServe},
    {"history", HistoryHelp, strag::cli::RunHistory},
    {"simulate", SimulateHelp, strag::cli::RunSimulate},
};

}  // namespace

int main(int argc, char** argv) {
  strag::cli::SetLiveSimulation(strag::cli::RunSimulateLive);
  std::vector<std::string> args(argv + 1, argv + argc);
  // `strag help COMMAND` is `strag COMMAND --help`.
  if (args.size() == 2 && args[0] == "help") args = {args[1], "--help"};
  const strag::cli::Command* c =
      args.empty() ? nullptr : strag::cli::FindCommand(kCommands, args[0]);
  if (c == nullptr) {
    std::fputs("strag-serve runs strag's serve, history and simulate --live:"
               " run it as strag COMMAND (strag --help)\n",
               stderr);
    return 2;
  }
  args.erase(args.begin());
  return strag::cli::RunCommand(*c, args);
}
