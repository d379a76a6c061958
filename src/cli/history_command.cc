// SPDX-License-Identifier: Apache-2.0
// `strag history`: what `strag serve` kept (serve/store/history.h).

#include <unistd.h>

#include <cstdio>

#include "base/json_writer.h"
#include "base/str_format.h"
#include "cli/flags.h"
#include "cli/output_file.h"
#include "cli/serve_command.h"
#include "serve/store/history.h"
#include "serve/store/schema.h"

namespace strag::cli {

const char kHistoryUsage[] =
    "usage: strag history [options]\n"
    "  Jobs and alerts that `strag serve` stored, and past steps of a job as\n"
    "  an ops CSV that strag analyze and strag plan read.\n"
    "  --db FILE            the collector's database (default strag-live.db)\n"
    "  --alerts             list alerts (of --job, or of every job)\n"
    "  --job NAME           the job\n"
    "  --export OUT         write the job's steps as an ops CSV (- : stdout)\n"
    "  --from-step A        first step exported\n"
    "  --to-step B          last step exported\n"
    "  --since T, --until T data time range, Unix seconds\n"
    "  --json               print jobs or alerts as JSON; with --export, write\n"
    "                       the steps as JSON (strag.history.steps/1)\n";

namespace {

std::string JobsText(const std::vector<serve::JobRow>& jobs) {
  std::string out = StrFormat("%-24s %6s %8s %10s %10s %6s %7s\n", "job",
                              "ranks", "steps", "last step", "mean step",
                              "util", "alerts");
  for (const serve::JobRow& j : jobs) {
    out += StrFormat("%-24s %6lld %8lld %10lld %8.1f ms %5.1f%% %7lld\n",
                     j.name.c_str(), static_cast<long long>(j.ranks),
                     static_cast<long long>(j.steps),
                     static_cast<long long>(j.last_step), j.mean_step_s * 1e3,
                     100 * j.utilization, static_cast<long long>(j.alerts));
  }
  return out;
}

std::string JobsJsonText(const std::vector<serve::JobRow>& jobs) {
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.history.jobs/1");
  w.Key("jobs");
  w.BeginArray();
  for (const serve::JobRow& j : jobs) {
    w.BeginObject();
    w.FieldString("job", j.name);
    w.FieldInt("ranks", j.ranks);
    w.FieldInt("steps", j.steps);
    w.FieldInt("first_step", j.first_step);
    w.FieldInt("last_step", j.last_step);
    w.Field("first_seen_s", j.first_seen_s);
    w.Field("last_seen_s", j.last_seen_s);
    w.Field("mean_step_s", j.mean_step_s);
    w.Field("utilization", j.utilization);
    w.FieldInt("alerts", j.alerts);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

std::string AlertsText(const std::vector<serve::AlertRow>& alerts) {
  std::string out;
  for (const serve::AlertRow& a : alerts) {
    out += StrFormat("%s  %-28s %-16s steps %lld-%s  ranks %s  %s\n    %s\n",
                     a.job.c_str(), a.name.c_str(), a.cause.c_str(),
                     static_cast<long long>(a.start_step),
                     a.end_step < 0 ? "(firing)"
                                    : std::to_string(a.end_step).c_str(),
                     a.ranks.c_str(), a.scope.c_str(), a.summary.c_str());
  }
  return out.empty() ? "no alerts\n" : out;
}

std::string AlertsJsonText(const std::vector<serve::AlertRow>& alerts) {
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.history.alerts/1");
  w.Key("alerts");
  w.BeginArray();
  for (const serve::AlertRow& a : alerts) {
    w.BeginObject();
    w.FieldString("job", a.job);
    w.FieldString("name", a.name);
    w.FieldString("cause", a.cause);
    w.FieldString("ranks", a.ranks);
    w.FieldString("scope", a.scope);
    w.FieldInt("start_step", a.start_step);
    w.FieldInt("end_step", a.end_step);
    w.Field("start_s", a.start_s);
    w.Field("end_s", a.end_s);
    w.Field("excess_ratio", a.excess_ratio);
    w.FieldString("summary", a.summary);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace

Status RunHistory(const std::vector<std::string>& args) {
  const FlagSpec spec{
      .with_value = {"db", "job", "export", "from-step", "to-step", "since",
                     "until"},
      .booleans = {"alerts", "json"},
  };
  ASSIGN_OR_RETURN(Flags flags, Flags::Parse(args, spec));
  const std::string path = flags.Get("db").value_or("strag-live.db");
  if (access(path.c_str(), R_OK) != 0) {
    return NotFound("--db " + path + ": no such database");
  }
  ASSIGN_OR_RETURN(serve::Db db, serve::OpenReaderDb(path));
  const std::string job = flags.Get("job").value_or("");
  if (auto out = flags.Get("export")) {
    if (job.empty()) return InvalidInput("--export needs --job NAME");
    serve::ExportRange range;
    ASSIGN_OR_RETURN(auto from, flags.GetInt("from-step"));
    ASSIGN_OR_RETURN(auto to, flags.GetInt("to-step"));
    ASSIGN_OR_RETURN(auto since, flags.GetDouble("since"));
    ASSIGN_OR_RETURN(auto until, flags.GetDouble("until"));
    if (from) range.from_step = *from;
    if (to) range.to_step = *to;
    if (since) range.from_s = *since;
    if (until) range.to_s = *until;
    OutputFiles outputs;
    RETURN_IF_ERROR(outputs.Declare("--export", *out));
    ASSIGN_OR_RETURN(std::string text,
                     flags.Has("json") ? serve::ExportStepsJson(db, job, range)
                                       : serve::ExportOpsCsv(db, job, range));
    RETURN_IF_ERROR(outputs.Write(*out, text));
    return outputs.Commit();
  }
  if (flags.Has("alerts")) {
    ASSIGN_OR_RETURN(auto alerts, serve::ListAlerts(db, job));
    const std::string text =
        flags.Has("json") ? AlertsJsonText(alerts) : AlertsText(alerts);
    std::fputs(text.c_str(), stdout);
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(auto jobs, serve::ListJobs(db));
  std::fputs((flags.Has("json") ? JobsJsonText(jobs) : JobsText(jobs)).c_str(),
             stdout);
  return Status::Ok();
}

}  // namespace strag::cli
