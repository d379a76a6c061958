// SPDX-License-Identifier: Apache-2.0
#include "cli/cost_command.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "cli/flags.h"
#include "cli/report_flags.h"
#include "report/calculators.h"
#include "report/render/calculators.h"

namespace strag::cli {

const char kCostUsage[] =
    "usage: strag cost --slowdown S --gpus N (--days D | --hours H) "
    "[options]\n"
    "  what a run loses to stragglers: the share 1 - 1/S of its GPU-hours\n"
    "  and of its wall-clock time (see docs/formats/calculators.md)\n"
    "  --slowdown S          S = observed step time / ideal step time (>= 1);\n"
    "                        `strag analyze` prints it as the cost slowdown\n"
    "                        (S x launch slowdown = 1 / utilization), which\n"
    "                        gives its cost lines; its S alone (replayed /\n"
    "                        ideal) leaves out the launch delays\n"
    "  --gpus N              GPUs of the job\n"
    "  --days D, --hours H   the run's length, stragglers included\n"
    "  --usd-per-gpu-hour X  GPU price (default 2.00)\n"
    "  --json                print JSON (schema strag.cost/1) instead of text\n"
    "example: strag cost --slowdown 1.1111 --gpus 4096 --days 10\n";

namespace {

std::string Short(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", value);
  return buf;
}

Result<econ::RunCost> CostFromFlags(const Flags& flags) {
  if (!flags.positional().empty()) {
    return InvalidInput("cost takes no positional arguments, got \"" +
                        flags.positional()[0] + "\"\n" + kCostUsage);
  }
  ASSIGN_OR_RETURN(std::optional<double> slowdown, flags.GetDouble("slowdown"));
  ASSIGN_OR_RETURN(std::optional<int64_t> gpus,
                   flags.GetInt("gpus", 1, (int64_t{1} << 31) - 1));
  ASSIGN_OR_RETURN(std::optional<double> days, flags.GetDouble("days"));
  ASSIGN_OR_RETURN(std::optional<double> hours, flags.GetDouble("hours"));
  ASSIGN_OR_RETURN(std::optional<double> price, UsdPerGpuHour(flags));
  if (days && hours) {
    return InvalidInput("give --days or --hours, not both");
  }
  if (!slowdown || !gpus || (!days && !hours)) {
    return InvalidInput(
        "cost needs --slowdown, --gpus and one of --days or --hours\n" +
        std::string(kCostUsage));
  }
  if (*slowdown < 1) {
    return InvalidInput("flag --slowdown: S must be >= 1, got " +
                        Short(*slowdown));
  }
  if (*gpus < 1) return InvalidInput("flag --gpus: must be >= 1");
  const double length_days = days ? *days : *hours / 24;
  if (!(length_days > 0)) {
    return InvalidInput(std::string("flag --") + (days ? "days" : "hours") +
                        ": must be positive");
  }
  return report::AnswerCost(*slowdown, *gpus, length_days, price);
}

}  // namespace

Status RunCost(const std::vector<std::string>& args) {
  const FlagSpec spec{
      .with_value = {"slowdown", "gpus", "days", "hours", "usd-per-gpu-hour"},
      .booleans = {"json"},
  };
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  ASSIGN_OR_RETURN(econ::RunCost cost, CostFromFlags(flags));
  const std::string text =
      flags.Has("json") ? report::RenderCostJson(cost)
                        : report::RenderCostText(cost);
  std::fputs(text.c_str(), stdout);
  return Status::Ok();
}

}  // namespace strag::cli
