// SPDX-License-Identifier: Apache-2.0
// The Prometheus exposition of `strag serve` (GET /metrics, text format
// 0.0.4; docs/live.md lists the series). Job series carry the label
// `train_job` (a scraped `job` would be renamed exported_job); per-rank
// series exist only for each job's top-k stragglers, so a 100k-rank job
// exposes about 40 + 10 k series.

#ifndef STRAG_SRC_SERVE_METRICS_TEXT_H_
#define STRAG_SRC_SERVE_METRICS_TEXT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "serve/live/job_monitor.h"
#include "serve/store/ingest_store.h"

namespace strag::serve {

inline constexpr double kRequestBucketsS[] = {0.005, 0.01, 0.025, 0.05, 0.1,
                                              0.25,  0.5,  1,     2.5,  5};

struct HttpStats {
  std::map<int, int64_t> requests_by_code;
  int64_t records_rejected = 0;  // in requests answered 400 / 413
  int64_t ingest_requests = 0;
  double ingest_seconds_sum = 0;
  std::vector<int64_t> ingest_buckets;  // cumulative, kRequestBucketsS
};

struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double start_time_s = 0;  // Unix time
  int64_t open_fds = 0;
  int64_t db_bytes = 0;
};

// This process, from /proc (zeros where unavailable).
ProcessStats ReadProcessStats(double start_time_s, const std::string& db_path);

std::string RenderMetrics(const std::vector<JobMonitor::Snapshot>& jobs,
                          const StoreStats& store, const HttpStats& http,
                          const ProcessStats& process);

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_METRICS_TEXT_H_
