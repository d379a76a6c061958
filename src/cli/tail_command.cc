// SPDX-License-Identifier: Apache-2.0
#include "cli/tail_command.h"

#include <charconv>
#include <cstdio>
#include <optional>

#include "cli/cost_command.h"
#include "cli/flags.h"
#include "econ/tail.h"
#include "base/json_writer.h"

namespace strag::cli {

const char kTailUsage[] =
    "usage: strag tail N DIST [options]\n"
    "  N iid workers, each taking a step time drawn from DIST; the step ends\n"
    "  when the slowest ends (see docs/formats/calculators.md)\n"
    "  N                  number of workers (1 to 1e9)\n"
    "  DIST               one worker's step time:\n"
    "                       normal:MEAN,SD         e.g. normal:100ms,5ms\n"
    "                       lognormal:MEAN,SIGMA   MEAN = E[X], SIGMA = sd of "
    "ln X,\n"
    "                                              e.g. lognormal:100ms,0.1\n"
    "                       exp:MEAN               e.g. exp:100ms\n"
    "                       twopoint:[BASE,]p=P,d=D  BASE, plus D with "
    "probability P,\n"
    "                                              e.g. "
    "twopoint:100ms,p=0.01,d=20ms\n"
    "                       fixed:T                e.g. fixed:100ms\n"
    "                     units: ns, us, ms, s\n"
    "  --slow-above T     call a worker slow when its step exceeds T (for\n"
    "                     P(at least one slow worker); twopoint: the delayed)\n"
    "  --backups B        also: the step with B extra workers, when it needs\n"
    "                     only the first N of N + B to finish\n"
    "  --json             print JSON (schema strag.tail/1) instead of text\n";

namespace {

constexpr int64_t kMaxWorkers = 1000000000;

struct TailRequest {
  int64_t workers = 0;
  std::string text;
  econ::Distribution dist;
  std::optional<double> slow_above_s;
  std::optional<int64_t> backups;
};

Result<int64_t> ParseWorkers(const std::string& text) {
  int64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || ptr != end || n < 1 || n > kMaxWorkers) {
    return InvalidInput("N \"" + text +
                        "\" is not a number of workers (1 to 1e9)");
  }
  return n;
}

Result<TailRequest> RequestFromFlags(const Flags& flags) {
  if (flags.positional().size() != 2) {
    return InvalidInput(
        "tail needs N and DIST, e.g. strag tail 1024 "
        "normal:100ms,5ms\n" +
        std::string(kTailUsage));
  }
  TailRequest r;
  r.text = flags.positional()[1];
  ASSIGN_OR_RETURN(r.workers, ParseWorkers(flags.positional()[0]));
  ASSIGN_OR_RETURN(r.dist, econ::ParseDistribution(r.text));
  if (auto t = flags.Get("slow-above")) {
    auto seconds = econ::ParseDuration(*t);
    if (!seconds.ok()) return seconds.status().WithContext("flag --slow-above");
    r.slow_above_s = *seconds;
  }
  ASSIGN_OR_RETURN(r.backups, flags.GetInt("backups"));
  if (r.backups && (*r.backups < 0 || *r.backups > kMaxWorkers)) {
    return InvalidInput("flag --backups: must be between 0 and 1e9");
  }
  return r;
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

// Backup workers: E[step] and the GPU time it costs beyond N x E[X].
struct Backups {
  int64_t count = 0;
  double expected_step_s = 0;
  double lost_gpu_seconds_per_step = 0;
};

Backups ComputeBackups(const TailRequest& r, const econ::TailSummary& s) {
  Backups b;
  b.count = *r.backups;
  b.expected_step_s = econ::ExpectedWithBackups(r.dist, r.workers, b.count);
  b.lost_gpu_seconds_per_step =
      static_cast<double>(r.workers + b.count) * b.expected_step_s -
      static_cast<double>(r.workers) * s.mean_s;
  return b;
}

void WriteDistribution(const TailRequest& r, JsonWriter* w) {
  static constexpr const char* kKinds[] = {"normal", "lognormal", "exponential",
                                           "twopoint", "fixed"};
  const econ::Distribution& d = r.dist;
  w->Key("distribution");
  w->BeginObject();
  w->FieldString("text", r.text);
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

std::string RenderJson(const TailRequest& r, const econ::TailSummary& s) {
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.tail/1");
  w.FieldInt("workers", r.workers);
  WriteDistribution(r, &w);
  w.Field("mean_s", s.mean_s);
  w.Field("expected_max_s", s.expected_max_s);
  w.Field("std_max_s", s.std_max_s);
  w.Field("utilization", s.utilization);
  w.Field("lost_gpu_seconds_per_step", s.lost_gpu_seconds_per_step);
  w.Key("slow_above_s");
  r.slow_above_s ? w.Number(*r.slow_above_s) : w.Null();
  w.Key("p_slow");
  s.p_slow ? w.Number(*s.p_slow) : w.Null();
  w.Key("p_any_slow");
  s.p_any_slow ? w.Number(*s.p_any_slow) : w.Null();
  if (r.backups) {
    const Backups b = ComputeBackups(r, s);
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

std::string RenderText(const TailRequest& r, const econ::TailSummary& s) {
  const std::string n = FormatGrouped(static_cast<double>(r.workers), 0);
  std::string out = n + (r.workers == 1 ? " worker, " : " workers, each ") +
                    econ::DescribeDistribution(r.dist) + "\n";
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
        r.slow_above_s ? "slower than " + econ::FormatDuration(*r.slow_above_s)
                       : "delayed";
    line("P(a worker is slow)", Percent(*s.p_slow) + " (" + what + ")");
    line("P(at least one slow worker)",
         Percent(*s.p_any_slow) + " (1 - (1 - p)^N)");
  }
  if (r.backups) {
    const Backups b = ComputeBackups(r, s);
    const std::string all =
        FormatGrouped(static_cast<double>(r.workers + b.count), 0);
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

}  // namespace

Status RunTail(const std::vector<std::string>& args) {
  const FlagSpec spec{
      .with_value = {"slow-above", "backups"},
      .booleans = {"json"},
  };
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  ASSIGN_OR_RETURN(TailRequest request, RequestFromFlags(flags));
  const econ::TailSummary summary =
      econ::SummarizeTail(request.dist, request.workers, request.slow_above_s);
  const std::string text = flags.Has("json") ? RenderJson(request, summary)
                                             : RenderText(request, summary);
  std::fputs(text.c_str(), stdout);
  return Status::Ok();
}

}  // namespace strag::cli
