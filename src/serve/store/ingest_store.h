// SPDX-License-Identifier: Apache-2.0
// IngestStore: the collector's only SQLite writer. Request handlers hand it
// parsed batches and wait; one thread stores everything queued in a single
// transaction (group commit) and wakes the handlers only after the COMMIT,
// so an acknowledgement means "stored", and a crash before it means "send
// again" (docs/formats/agent-protocol.md, exactly-once).
//
// Deduplication: per stream (job, rank, epoch) the last stored seq, kept in
// the table `streams` in the same transaction as the records and in memory;
// a record at or below it is a duplicate. After each commit the stored
// records go to the CommitSink (the live monitor), in commit order.

#ifndef STRAG_SRC_SERVE_STORE_INGEST_STORE_H_
#define STRAG_SRC_SERVE_STORE_INGEST_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ingest/agent/agent_records.h"
#include "serve/store/sqlite_db.h"

namespace strag::serve {

struct StoreOptions {
  bool full_sync = true;              // synchronous=FULL (else NORMAL)
  int64_t max_queue_records = 200'000;  // beyond: Write answers kBusy (503)
};

enum class WriteOutcome { kStored, kBusy, kFailed };

struct WriteResult {
  WriteOutcome outcome = WriteOutcome::kStored;
  int64_t stored = 0, duplicates = 0;
  int64_t lost_dropped = 0, lost_unexplained = 0;
  std::string error;  // kFailed
};

// Counters since the process started (Prometheus self-metrics).
struct StoreStats {
  int64_t records_stored = 0, duplicates = 0;
  int64_t lost_dropped = 0, lost_unexplained = 0;
  int64_t commits = 0, failed_commits = 0;
  int64_t queue_records = 0;
  double commit_seconds_sum = 0;
  std::vector<int64_t> commit_buckets;  // cumulative, kCommitBucketsS
};
inline constexpr double kCommitBucketsS[] = {0.001, 0.0025, 0.005, 0.01,
                                             0.025, 0.05,   0.1,   0.25,
                                             0.5,   1,      2.5};

// Records of one committed batch: `fresh[i]` is 1 when batch.records[i] was
// stored (not a duplicate). `job_ids` maps batch.jobs to database ids.
using CommitSink = std::function<void(const ingest::agent::AgentBatch& batch,
                                      const std::vector<uint8_t>& fresh,
                                      const std::vector<int64_t>& job_ids)>;

class IngestStore {
 public:
  static Result<std::unique_ptr<IngestStore>> Open(const std::string& path,
                                                   const StoreOptions& options,
                                                   CommitSink sink);
  ~IngestStore();  // stores what is queued, then stops
  IngestStore(const IngestStore&) = delete;
  IngestStore& operator=(const IngestStore&) = delete;

  // Blocks until the batch is committed, or answers kBusy at once when the
  // queue is full.
  WriteResult Write(ingest::agent::AgentBatch batch);

  // Runs `task` inside a later transaction of the writer thread (alerts,
  // step aggregates, retention); does not wait. A failing task is counted
  // and rolls back only itself (a savepoint).
  void Post(std::function<Status(Db&)> task);

  StoreStats Stats() const;
  const std::string& path() const;

 private:
  struct Impl;
  explicit IngestStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_STORE_INGEST_STORE_H_
