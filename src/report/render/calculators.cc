// SPDX-License-Identifier: Apache-2.0
#include "report/render/calculators.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "base/json_writer.h"

namespace strag::report {

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

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g%%", 100 * share);
  return buf;
}

std::string GpuSeconds(double value) {
  char buf[32];
  if (value >= 1000) return FormatGrouped(value, 1);
  std::snprintf(buf, sizeof(buf), "%.4g", value);
  return buf;
}

}  // namespace

std::string RenderCostJson(const econ::RunCost& c) {
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

std::string RenderCostText(const econ::RunCost& c) {
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

void WriteDistribution(const TailAnswer& a, JsonWriter* w) {
  static constexpr const char* kKinds[] = {"normal", "lognormal", "exponential",
                                           "twopoint", "fixed"};
  const econ::Distribution& d = a.dist;
  w->Key("distribution");
  w->BeginObject();
  w->FieldString("text", a.question.distribution);
  w->FieldString("kind", kKinds[static_cast<int>(d.kind)]);
  w->Field("mean_s", econ::Mean(d));
  w->Field("sd_s", econ::StdDev(d));
  using Kind = econ::Distribution::Kind;
  if (d.kind == Kind::kLognormal) w->Field("log_sigma", d.log_sigma);
  if (d.kind == Kind::kTwoPoint) {
    w->Field("base_s", d.base_s);
    w->Field("p", d.p);
    w->Field("delay_s", d.delay_s);
  }
  w->EndObject();
}

std::string RenderTailJson(const TailAnswer& a) {
  const econ::TailSummary& s = a.summary;
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.tail/1");
  w.FieldInt("workers", a.question.workers);
  WriteDistribution(a, &w);
  w.Field("mean_s", s.mean_s);
  w.Field("expected_max_s", s.expected_max_s);
  w.Field("std_max_s", s.std_max_s);
  w.Field("utilization", s.utilization);
  w.Field("lost_gpu_seconds_per_step", s.lost_gpu_seconds_per_step);
  w.Key("slow_above_s");
  a.slow_above_s ? w.Number(*a.slow_above_s) : w.Null();
  w.Key("p_slow");
  s.p_slow ? w.Number(*s.p_slow) : w.Null();
  w.Key("p_any_slow");
  s.p_any_slow ? w.Number(*s.p_any_slow) : w.Null();
  if (a.backups) {
    const BackupAnswer& b = *a.backups;
    w.Key("backups");
    w.BeginObject();
    w.FieldInt("count", b.count);
    w.Field("expected_step_s", b.expected_step_s);
    w.Field("lost_gpu_seconds_per_step", b.lost_gpu_seconds_per_step);
    w.EndObject();
  }
  w.EndObject();
  return w.str() + "\n";
}

std::string RenderTailText(const TailAnswer& a) {
  const econ::TailSummary& s = a.summary;
  const int64_t workers = a.question.workers;
  const std::string n = FormatGrouped(static_cast<double>(workers), 0);
  std::string out = n + (workers == 1 ? " worker, " : " workers, each ") +
                    econ::DescribeDistribution(a.dist) + "\n";
  const auto line = [&out](const char* label, const std::string& value) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "  %-30s %s\n", label, value.c_str());
    out += buf;
  };
  line("one worker's step, E[X]", econ::FormatDuration(s.mean_s));
  line("synchronous step, E[max]", econ::FormatDuration(s.expected_max_s) +
                                       " (sd " +
                                       econ::FormatDuration(s.std_max_s) + ")");
  line("fast workers' utilization",
       Percent(s.utilization) + " (E[X] / E[max])");
  line("GPU-seconds lost per step",
       GpuSeconds(s.lost_gpu_seconds_per_step) + " (N x (E[max] - E[X]))");
  if (s.p_slow && s.p_any_slow) {
    const std::string what =
        a.slow_above_s ? "slower than " + econ::FormatDuration(*a.slow_above_s)
                       : "delayed";
    line("P(a worker is slow)", Percent(*s.p_slow) + " (" + what + ")");
    line("P(at least one slow worker)",
         Percent(*s.p_any_slow) + " (1 - (1 - p)^N)");
  }
  if (a.backups) {
    const BackupAnswer& b = *a.backups;
    const std::string all =
        FormatGrouped(static_cast<double>(workers + b.count), 0);
    const std::string label =
        "with " + FormatGrouped(static_cast<double>(b.count), 0) + " backups";
    line(label.c_str(), econ::FormatDuration(b.expected_step_s) +
                            " per step (the first " + n + " of " + all +
                            " to finish)");
    line("", GpuSeconds(b.lost_gpu_seconds_per_step) +
                 " GPU-seconds lost per step (" + all +
                 " x E[step] - N x E[X])");
  }
  return out;
}

}  // namespace strag::report
