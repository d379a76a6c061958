// SPDX-License-Identifier: Apache-2.0
#include "cli/tail_command.h"

#include <charconv>
#include <cstdio>
#include <optional>
#include <utility>

#include "cli/flags.h"
#include "report/calculators.h"
#include "report/render/calculators.h"

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

Result<report::TailQuestion> QuestionFromFlags(const Flags& flags) {
  if (flags.positional().size() != 2) {
    return InvalidInput(
        "tail needs N and DIST, e.g. strag tail 1024 "
        "normal:100ms,5ms\n" +
        std::string(kTailUsage));
  }
  report::TailQuestion q;
  q.distribution = flags.positional()[1];
  ASSIGN_OR_RETURN(q.workers, ParseWorkers(flags.positional()[0]));
  q.slow_above = flags.Get("slow-above");
  ASSIGN_OR_RETURN(q.backups, flags.GetInt("backups"));
  if (q.backups && (*q.backups < 0 || *q.backups > kMaxWorkers)) {
    return InvalidInput("flag --backups: must be between 0 and 1e9");
  }
  return q;
}

}  // namespace

Status RunTail(const std::vector<std::string>& args) {
  const FlagSpec spec{
      .with_value = {"slow-above", "backups"},
      .booleans = {"json"},
  };
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  ASSIGN_OR_RETURN(report::TailQuestion question, QuestionFromFlags(flags));
  ASSIGN_OR_RETURN(const report::TailAnswer answer,
                   report::AnswerTail(std::move(question)));
  const std::string text = flags.Has("json")
                               ? report::RenderTailJson(answer)
                               : report::RenderTailText(answer);
  std::fputs(text.c_str(), stdout);
  return Status::Ok();
}

}  // namespace strag::cli
