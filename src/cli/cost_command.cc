// SPDX-License-Identifier: Apache-2.0
#include "cli/cost_command.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "cli/flags.h"
#include "cli/report_flags.h"
#include "report/report.h"
#include "econ/run_cost.h"
#include "base/json_writer.h"

namespace strag::cli {

const char kCostUsage[] =
    "usage: strag cost --slowdown S --gpus N (--days D | --hours H) "
    "[options]\n"
    "  what a run loses to stragglers: the share 1 - 1/S of its GPU-hours\n"
    "  and of its wall-clock time (see docs/formats/calculators.md)\n"
    "  --slowdown S          S = step time with stragglers / ideal step time\n"
    "                        (>= 1; `strag analyze` prints it)\n"
    "  --gpus N              GPUs of the job\n"
    "  --days D, --hours H   the run's length, stragglers included\n"
    "  --usd-per-gpu-hour X  GPU price (default 2.00)\n"
    "  --json                print JSON (schema strag.cost/1) instead of text\n"
    "example: strag cost --slowdown 1.1111 --gpus 4096 --days 10\n";

std::string FormatGrouped(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, std::fabs(value));
  std::string digits(buf);
  const size_t dot = digits.find('.');
  const size_t int_len = dot == std::string::npos ? digits.size() : dot;
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && i < int_len && (int_len - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  // No "-0" when a tiny negative value rounds to zero.
  const bool negative =
      value < 0 && out.find_first_not_of("0.,") != std::string::npos;
  return negative ? "-" + out : out;
}

namespace {

// Money and GPU-hours read best whole once they are large.
std::string Amount(double value) {
  return FormatGrouped(value, std::fabs(value) >= 100 ? 0 : 2);
}

std::string Short(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", value);
  return buf;
}

std::string Precise(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", value);
  return buf;
}

Result<econ::RunCost> CostFromFlags(const Flags& flags) {
  if (!flags.positional().empty()) {
    return InvalidInput("cost takes no positional arguments, got \"" +
                        flags.positional()[0] + "\"\n" + kCostUsage);
  }
  ASSIGN_OR_RETURN(std::optional<double> slowdown, flags.GetDouble("slowdown"));
  ASSIGN_OR_RETURN(std::optional<int64_t> gpus, flags.GetInt("gpus"));
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
  return econ::ComputeRunCost(*slowdown, *gpus, length_days,
                              price.value_or(report::kDefaultUsdPerGpuHour));
}

std::string RenderJson(const econ::RunCost& c) {
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.cost/1");
  w.Field("slowdown", c.slowdown);
  w.FieldInt("gpus", c.gpus);
  w.Field("days", c.days);
  w.Field("hours", c.days * 24);
  w.Field("usd_per_gpu_hour", c.usd_per_gpu_hour);
  w.Field("gpu_hours", c.gpu_hours);
  w.Field("wasted_share", c.wasted_share);
  w.Field("wasted_gpu_hours", c.wasted_gpu_hours);
  w.Field("wasted_usd", c.wasted_usd);
  w.Field("extra_days", c.extra_days);
  w.EndObject();
  return w.str() + "\n";
}

std::string RenderText(const econ::RunCost& c) {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof(buf),
                "%s GPUs for %s days (%s hours, %s GPU-hours) at slowdown "
                "S = %s\n",
                FormatGrouped(static_cast<double>(c.gpus), 0).c_str(),
                Short(c.days).c_str(), Short(c.days * 24).c_str(),
                Amount(c.gpu_hours).c_str(), Precise(c.slowdown).c_str());
  out += buf;
  std::snprintf(
      buf, sizeof(buf),
      "  lost to stragglers     %s%% of the GPU-hours (1 - 1/S)\n"
      "  wasted GPU-hours       %s\n"
      "  wasted dollars         $%s at $%.2f/GPU-hour\n"
      "  extra wall-clock days  %s (%s days without stragglers)\n",
      Short(100 * c.wasted_share).c_str(), Amount(c.wasted_gpu_hours).c_str(),
      Amount(c.wasted_usd).c_str(), c.usd_per_gpu_hour,
      Short(c.extra_days).c_str(), Short(c.days - c.extra_days).c_str());
  out += buf;
  return out;
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
      flags.Has("json") ? RenderJson(cost) : RenderText(cost);
  std::fputs(text.c_str(), stdout);
  return Status::Ok();
}

}  // namespace strag::cli
