// SPDX-License-Identifier: Apache-2.0
// strag's command line: the commands, help and exit codes.
#include "cli/command_main.h"

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/str_format.h"
#include "cli/analyze_command.h"
#include "cli/build_info.h"
#include "cli/cost_command.h"
#include "cli/process_group.h"
#include "cli/simulate_command.h"
#include "cli/suggest.h"
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
    "  help [COMMAND]  this text, or a command's options (COMMAND --help)\n"
    "  --version       version, commit, compiler and features\n";

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
template <typename Fn>
strag::Status Guarded(const std::string& name, const Fn& command) {
  try {
    return command();
  } catch (const std::bad_alloc&) {
    return strag::Internal("out of memory while running '" + name + "'");
  } catch (const std::length_error& e) {
    return strag::Internal("out of memory while running '" + name + "' (" +
                           e.what() + ")");
  }
}

using strag::cli::Command;

std::string AnalyzeHelp() { return strag::cli::AnalyzeUsage(); }
std::string PlanHelp() { return strag::cli::PlanUsage(); }
std::string SimulateHelp() { return strag::cli::SimulateUsage(); }
std::string TailHelp() { return strag::cli::kTailUsage; }
std::string CostHelp() { return strag::cli::kCostUsage; }

constexpr Command kCommands[] = {
    {"analyze", AnalyzeHelp, strag::cli::RunAnalyze},
    {"plan", PlanHelp, strag::cli::RunPlan},
    {"simulate", SimulateHelp, strag::cli::RunSimulate},
    {"tail", TailHelp, strag::cli::RunTail},
    {"cost", CostHelp, strag::cli::RunCost},
    {"serve", nullptr, nullptr},
    {"history", nullptr, nullptr},
};

// The binary beside strag that runs serve, history and simulate --live.
constexpr char kServeBinary[] = "strag-serve";

// `simulate ... --live URL` (or --live=URL).
bool WantsLive(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--live" || a.starts_with("--live=")) return true;
  }
  return false;
}

int UnknownCommand(const std::string& name) {
  std::vector<std::string> names;
  for (const Command& c : kCommands) names.emplace_back(c.name);
  const std::optional<std::string> near = strag::cli::Closest(name, names);
  std::fprintf(stderr, "strag: unknown command \"%s\"%s\n%s",
               strag::Printable(name).c_str(),
               near ? (" (did you mean " + *near + "?)").c_str() : "", kUsage);
  return 2;
}

// glibc's allocator keeps what an analysis frees for its next
// allocations instead of handing it back and faulting it in again: blocks
// up to 4 MiB come from the heap (the default threshold starts at 128 KiB),
// which is trimmed only past 64 MiB free. A small job's columns are freed
// and allocated again between reading, preparing and replaying, and the
// page faults of that were a tenth of trace-AR's time (docs/
// performance.md); larger blocks are still mapped and unmapped whole, so
// a large job's peak memory is unchanged.
void TuneAllocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

}  // namespace

namespace strag::cli {

int Main(int argc, char** argv) {
  TuneAllocator();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::fputs(strag::cli::VersionText().c_str(), stdout);
    return 0;
  }
  // `strag help COMMAND` is `strag COMMAND --help`.
  if (args[0] == "help") {
    if (args.size() == 1) return PrintHelp(kUsage);
    const Command* c = FindCommand(kCommands, args[1]);
    if (c == nullptr) return UnknownCommand(args[1]);
    if (c->run == nullptr) return HandOver(kServeBinary, argv);
    return PrintHelp(c->usage().c_str());
  }
  const std::string command = args[0];
  args.erase(args.begin());
  const Command* c = FindCommand(kCommands, command);
  if (c == nullptr) return UnknownCommand(command);
  if (c->run == nullptr || (command == "simulate" && WantsLive(args))) {
    return HandOver(kServeBinary, argv);
  }
  return RunCommand(*c, args);
}

const Command* FindCommand(std::span<const Command> commands,
                           const std::string& name) {
  for (const Command& c : commands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

int RunCommand(const Command& command, const std::vector<std::string>& args) {
  if (WantsHelp(args)) return PrintHelp(command.usage().c_str());
  const strag::Status status =
      Guarded(command.name, [&] { return command.run(args); });
  // Processes of one analysis fail alike: the lead one says why (the others
  // only of a bug).
  if (!status.ok() &&
      (IsLeadProcess() || status.code() == StatusCode::kInternal)) {
    // Echoed input is escaped: no control byte reaches the terminal.
    std::fprintf(stderr, "strag: error: %s\n",
                 strag::Printable(status.message()).c_str());
  }
  return ExitCode(status);
}

std::string BesideThisBinary(const std::string& name) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  const std::string path(self, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + name;
}

int HandOver(const std::string& binary, char** argv) {
  const std::string path = BesideThisBinary(binary);
  execv(path.c_str(), argv);
  std::fprintf(stderr,
               "strag: error: this command is run by %s, which cannot be "
               "started (%s): build or install it beside strag\n",
               path.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace strag::cli
