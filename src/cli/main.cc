// SPDX-License-Identifier: Apache-2.0
// strag: find, explain and price stragglers in synchronous training.

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/str_format.h"
#include "cli/analyze_command.h"
#include "cli/cost_command.h"
#include "cli/serve_command.h"
#include "cli/simulate_command.h"
#include "cli/tail_command.h"

namespace {

constexpr char kUsage[] =
    "usage: strag COMMAND [options]\n"
    "commands:\n"
    "  analyze TRACE   what-if analysis of a job's ops trace (strag analyze "
    "--help)\n"
    "  plan TRACE      every mitigation priced by replay and ranked "
    "(strag plan --help)\n"
    "  simulate SPEC   simulate a training job with injected stragglers "
    "(strag simulate --help)\n"
    "  tail N DIST     expected step time of N synchronous workers "
    "(strag tail --help)\n"
    "  cost            GPU-hours and dollars lost to a slowdown "
    "(strag cost --help)\n"
    "  serve           the live collector: agents, alerts, dashboard, "
    "/metrics\n"
    "                  (strag serve --help)\n"
    "  history         jobs, alerts and exports of strag serve's database\n"
    "                  (strag history --help)\n"
    "  help            this text\n";

int ExitCode(const strag::Status& status) {
  switch (status.code()) {
    case strag::StatusCode::kOk:
      return 0;
    case strag::StatusCode::kInvalidInput:
    case strag::StatusCode::kNotFound:
      return 2;
    case strag::StatusCode::kInternal:
    case strag::StatusCode::kIoError:  // e.g. a full disk: not the input's fault
      return 1;
  }
  return 1;
}

bool WantsHelp(const std::vector<std::string>& args) {
  return !args.empty() && (args[0] == "--help" || args[0] == "-h");
}

int PrintHelp(const char* usage) {
  std::fputs(usage, stdout);
  return 0;
}

// Runs a command: an allocation failure that escapes it (the readers say
// their own, with the file and the byte) is one line and exit 1, never
// std::terminate's SIGABRT.
template <typename Command>
strag::Status Guarded(const std::string& name, const Command& command) {
  try {
    return command();
  } catch (const std::bad_alloc&) {
    return strag::Internal("out of memory while running '" + name + "'");
  } catch (const std::length_error& e) {
    return strag::Internal("out of memory while running '" + name + "' (" +
                           e.what() + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" ||
      args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  strag::Status status;
  if (command == "analyze") {
    if (WantsHelp(args)) return PrintHelp(strag::cli::AnalyzeUsage().c_str());
    status = Guarded(command, [&] { return strag::cli::RunAnalyze(args); });
  } else if (command == "plan") {
    if (WantsHelp(args)) return PrintHelp(strag::cli::PlanUsage().c_str());
    status = Guarded(command, [&] { return strag::cli::RunPlan(args); });
  } else if (command == "simulate") {
    if (WantsHelp(args)) return PrintHelp(strag::cli::SimulateUsage().c_str());
    status = Guarded(command, [&] { return strag::cli::RunSimulate(args); });
  } else if (command == "tail") {
    if (WantsHelp(args)) return PrintHelp(strag::cli::kTailUsage);
    status = Guarded(command, [&] { return strag::cli::RunTail(args); });
  } else if (command == "cost") {
    if (WantsHelp(args)) return PrintHelp(strag::cli::kCostUsage);
    status = Guarded(command, [&] { return strag::cli::RunCost(args); });
  } else if (command == "serve") {
    if (WantsHelp(args)) return PrintHelp(strag::cli::kServeUsage);
    status = Guarded(command, [&] { return strag::cli::RunServe(args); });
  } else if (command == "history") {
    if (WantsHelp(args)) return PrintHelp(strag::cli::kHistoryUsage);
    status = Guarded(command, [&] { return strag::cli::RunHistory(args); });
  } else {
    std::fprintf(stderr, "strag: unknown command \"%s\"\n%s",
                 strag::Printable(command).c_str(), kUsage);
    return 2;
  }
  if (!status.ok()) {
    // Echoed input is escaped: no control byte reaches the terminal.
    std::fprintf(stderr, "strag: error: %s\n",
                 strag::Printable(status.message()).c_str());
  }
  return ExitCode(status);
}
