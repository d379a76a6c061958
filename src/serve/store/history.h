// SPDX-License-Identifier: Apache-2.0
// What the collector keeps beyond the raw records, and how it is read back:
// step aggregates and alerts (written by the writer thread, inside its
// transactions), retention of raw steps, and the queries of `strag
// history`: jobs, alerts, and a time range of a job exported as an ops CSV
// that `strag analyze` and `strag plan` read.

#ifndef STRAG_SRC_SERVE_STORE_HISTORY_H_
#define STRAG_SRC_SERVE_STORE_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "ingest/agent/agent_records.h"
#include "serve/live/job_monitor.h"
#include "serve/store/sqlite_db.h"

namespace strag::serve {

// Writer side (run through IngestStore::Post).
Status StoreClosedSteps(Db& db, int64_t job, const std::vector<ClosedStep>& c);
Status StoreCaptureResult(Db& db, int64_t job, const std::string& id,
                          const std::string& state, const std::string& summary);
// Deletes raw step records older than `keep_s` of data time (their
// aggregates stay), at most 100k rows per call.
Status ApplyRetention(Db& db, double keep_s);

// Recovery: the latest registrations and the last steps of every job, for
// the detector's windows after a restart. At most `max_records` step
// records in all (the newest steps of each job, whole steps).
struct RecentJob {
  int64_t id = 0;
  std::string name;
  struct Rank {
    int32_t rank = 0;
    int64_t epoch = 0;
    ingest::agent::RankInfo info;
  };
  struct Step {
    int32_t rank = 0;
    int64_t epoch = 0;
    ingest::agent::StepRecord record;
  };
  std::vector<Rank> ranks;
  std::vector<Step> steps;  // by step, then rank
};
Result<std::vector<RecentJob>> LoadRecent(Db& db, int64_t steps_per_job,
                                          int64_t max_records);

// Reader side.
struct JobRow {
  int64_t id = 0;
  std::string name;
  double first_seen_s = 0, last_seen_s = 0;  // Unix time
  int64_t ranks = 0, steps = 0, first_step = -1, last_step = -1;
  int64_t alerts = 0;
  double mean_step_s = 0, utilization = 1;
};
Result<std::vector<JobRow>> ListJobs(Db& db);

struct AlertRow {
  int64_t id = 0;
  std::string job, name, cause, ranks, scope, summary;
  int64_t start_step = 0, end_step = -1;
  double start_s = 0, end_s = 0;  // data time, Unix
  double excess_ratio = 0;
};
Result<std::vector<AlertRow>> ListAlerts(Db& db, const std::string& job);

struct ExportRange {
  int64_t from_step = INT64_MIN, to_step = INT64_MAX;
  double from_s = -1e300, to_s = 1e300;  // data time, Unix seconds
};
// The ops CSV of a job's stored steps in `range`: per rank and step, the
// phases as ops (forward, backward, the DP collective, optimizer) placed
// back to back before the step's end. kNotFound for an unknown job or an
// empty range.
Result<std::string> ExportOpsCsv(Db& db, const std::string& job,
                                 const ExportRange& range);

// The same steps as JSON (schema strag.history.steps/1, docs/live.md): one
// object per rank and step with the agent's fields, times in ns.
Result<std::string> ExportStepsJson(Db& db, const std::string& job,
                                    const ExportRange& range);

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_STORE_HISTORY_H_
