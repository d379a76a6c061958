// SPDX-License-Identifier: Apache-2.0
#include "serve/store/schema.h"

namespace strag::serve {
namespace {

// Jobs are numbered; every other table keys on the number. Steps are
// WITHOUT ROWID on (job, step, rank, epoch): appends are nearly sequential
// and step-range deletes (retention) are cheap. streams holds the last
// stored seq of every (job, rank, epoch), updated in the transaction that
// stores the records: the deduplication state is exactly what is committed.
constexpr const char* kTables = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
  first_seen_ns INTEGER, last_seen_ns INTEGER,
  world_size INTEGER DEFAULT 0, usd_per_gpu_hour REAL DEFAULT 0);
CREATE TABLE IF NOT EXISTS streams(
  job INTEGER, rank INTEGER, epoch INTEGER, last_seq INTEGER,
  lost_dropped INTEGER DEFAULT 0, lost_unexplained INTEGER DEFAULT 0,
  PRIMARY KEY(job, rank, epoch)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ranks(
  job INTEGER, rank INTEGER, epoch INTEGER,
  dp INTEGER, pp INTEGER, tp INTEGER, cp INTEGER,
  dp_size INTEGER, pp_size INTEGER, tp_size INTEGER, cp_size INTEGER,
  world_size INTEGER, local_rank INTEGER, microbatches INTEGER, pid INTEGER,
  host TEXT, device TEXT, torch TEXT, agent TEXT, usd_per_gpu_hour REAL,
  PRIMARY KEY(job, rank)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS steps(
  job INTEGER, step INTEGER, rank INTEGER, epoch INTEGER, seq INTEGER,
  t_end_ns INTEGER, step_ns INTEGER, data_ns INTEGER, fwd_ns INTEGER,
  bwd_ns INTEGER, opt_ns INTEGER, gc_ns INTEGER, gc_n INTEGER, gc_gen INTEGER,
  dp_ns INTEGER, pp_ns INTEGER, tp_ns INTEGER, cp_ns INTEGER, ep_ns INTEGER,
  other_ns INTEGER, coll_n INTEGER, tokens REAL, seqs REAL, sum_s2 REAL,
  flags INTEGER, gpu_clock INTEGER,
  PRIMARY KEY(job, step, rank, epoch)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS step_agg(
  job INTEGER, step INTEGER, t_end_ns INTEGER, step_ns INTEGER,
  ideal_ns INTEGER, worker_excess_ns INTEGER, stage_excess_ns INTEGER,
  last_rank INTEGER, lateness_ns INTEGER, reporting INTEGER, judged INTEGER,
  PRIMARY KEY(job, step)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alerts(
  id INTEGER PRIMARY KEY, job INTEGER, live_id INTEGER, name TEXT,
  cause TEXT, ranks TEXT,
  scope TEXT, start_step INTEGER, start_ns INTEGER, end_step INTEGER,
  end_ns INTEGER, excess_ratio REAL, summary TEXT, capture TEXT);
CREATE TABLE IF NOT EXISTS captures(
  id TEXT PRIMARY KEY, job INTEGER, alert INTEGER, ranks TEXT,
  start_step INTEGER, steps INTEGER, created_ns INTEGER, state TEXT,
  dir TEXT, summary TEXT);
)sql";

Status CheckSchema(Db& db) {
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT value FROM meta WHERE key = 'strag_schema'"));
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) {
    ASSIGN_OR_RETURN(Stmt ins, db.Prepare(
        "INSERT INTO meta(key, value) VALUES('strag_schema', ?)"));
    return ins.Bind(1, std::to_string(kSchemaVersion)).Run();
  }
  if (q.Text(0) != std::to_string(kSchemaVersion)) {
    return InvalidInput("db " + db.path() + ": schema version " + q.Text(0) +
                        ", this strag reads " +
                        std::to_string(kSchemaVersion));
  }
  return Status::Ok();
}

}  // namespace

Result<Db> OpenWriterDb(const std::string& path, bool full_sync) {
  ASSIGN_OR_RETURN(Db db, Db::Open(path, /*create=*/true, /*read_only=*/false));
  // A file that is not SQLite fails on the first statement.
  Status s = db.Exec("PRAGMA journal_mode=WAL");
  if (!s.ok()) {
    return InvalidInput("db " + path + ": not a strag database (" +
                        s.message() + ")");
  }
  RETURN_IF_ERROR(db.Exec(full_sync ? "PRAGMA synchronous=FULL"
                                    : "PRAGMA synchronous=NORMAL"));
  RETURN_IF_ERROR(db.Exec("PRAGMA journal_size_limit=67108864"));
  RETURN_IF_ERROR(db.Exec(kTables));
  RETURN_IF_ERROR(CheckSchema(db));
  return db;
}

Result<Db> OpenReaderDb(const std::string& path) {
  ASSIGN_OR_RETURN(Db db, Db::Open(path, false, /*read_only=*/true));
  return db;
}

}  // namespace strag::serve
