// SPDX-License-Identifier: Apache-2.0
// Collector: `strag serve`. An HTTP server (cpp-httplib) for the agents'
// records (docs/formats/agent-protocol.md), the IngestStore that commits
// them, one JobMonitor per job running the online detector, Prometheus
// /metrics, the dashboard and its JSON, and the targeted captures (trace
// uploads, analysed by `strag analyze` in a child process).

#ifndef STRAG_SRC_SERVE_COLLECTOR_H_
#define STRAG_SRC_SERVE_COLLECTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "serve/live/job_monitor.h"
#include "serve/store/ingest_store.h"

namespace strag::serve {

struct CollectorOptions {
  std::string host = "127.0.0.1";
  int port = 9400;  // 0: any free port (port() tells which)
  std::string db_path = "strag-live.db";
  std::string token;  // empty: none (loopback only)
  int64_t max_body_bytes = 8 << 20;
  int64_t max_inflated_bytes = 32 << 20;
  int64_t max_records = 10'000;
  int64_t max_trace_bytes = 64 << 20;
  int64_t max_trace_inflated_bytes = 512LL << 20;
  int threads = 16;
  double flush_interval_s = 1;  // told to the agents
  double retention_hours = 24;  // raw step records; aggregates stay
  std::string captures_dir;     // empty: next to the database
  std::string strag_exe;        // runs `analyze` on captures; empty: none
  MonitorOptions monitor;
  StoreOptions store;
};

// True for 127.0.0.0/8, ::1 and localhost.
bool IsLoopback(const std::string& host);

class Collector {
 public:
  // Opens the database and binds the port; kInvalidInput for options that
  // cannot work (a non-loopback address without a token, a bad database).
  static Result<std::unique_ptr<Collector>> Start(const CollectorOptions& o);
  ~Collector();

  int port() const;
  // Serves until Stop (another thread, or SIGINT/SIGTERM via the CLI).
  void Wait();
  void Stop();

  struct Impl;

 private:
  explicit Collector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_COLLECTOR_H_
