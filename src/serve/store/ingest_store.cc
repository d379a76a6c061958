// SPDX-License-Identifier: Apache-2.0
#include "serve/store/ingest_store.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "serve/store/schema.h"

namespace strag::serve {
namespace {

using ingest::agent::AgentBatch;
using ingest::agent::RecordHeader;
using ingest::agent::RecordKind;

struct StreamKey {
  int64_t job = 0;
  int32_t rank = 0;
  int64_t epoch = 0;
  bool operator==(const StreamKey&) const = default;
};
struct StreamKeyHash {
  size_t operator()(const StreamKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.job) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<uint64_t>(k.rank) + 0x7F4A7C15ull + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.epoch) + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};
struct StreamState {
  int64_t last_seq = 0, lost_dropped = 0, lost_unexplained = 0;
};

// A queued request: its batch, and where its handler waits.
struct Pending {
  AgentBatch batch;
  WriteResult result;
  bool done = false;
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct IngestStore::Impl {
  Db db;
  StoreOptions options;
  CommitSink sink;
  std::unordered_map<StreamKey, StreamState, StreamKeyHash> streams;
  std::map<std::string, int64_t, std::less<>> job_ids;
  Stmt insert_step, upsert_stream, upsert_rank, insert_job, touch_job;
  // Streams changed by the open transaction.
  std::unordered_set<StreamKey, StreamKeyHash> touched;

  mutable std::mutex mu;
  std::condition_variable wake_writer, wake_handlers;
  std::deque<Pending*> queue;
  std::vector<std::function<Status(Db&)>> tasks;
  int64_t queued_records = 0;
  bool stopping = false;
  StoreStats stats;
  std::thread writer;

  Status Load();
  Status Prepare();
  void Loop();
  void Commit(std::vector<Pending*>& items,
              std::vector<std::function<Status(Db&)>>& todo);
  Status Apply(Pending* p, std::vector<int64_t>* ids,
               std::vector<uint8_t>* fresh,
               std::vector<std::pair<StreamKey, StreamState>>* undo,
               std::vector<std::string>* new_jobs);
  Result<int64_t> JobId(const std::string& name,
                        std::vector<std::string>* new_jobs);
  Status StoreStep(int64_t job, const RecordHeader& h, const AgentBatch& b);
  Status StoreRank(int64_t job, const RecordHeader& h, const AgentBatch& b);
};

Status IngestStore::Impl::Load() {
  ASSIGN_OR_RETURN(Stmt q, db.Prepare(
      "SELECT job, rank, epoch, last_seq, lost_dropped, lost_unexplained "
      "FROM streams"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    streams[{q.Int(0), static_cast<int32_t>(q.Int(1)), q.Int(2)}] = {
        q.Int(3), q.Int(4), q.Int(5)};
  }
  ASSIGN_OR_RETURN(Stmt j, db.Prepare("SELECT id, name FROM jobs"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, j.Step());
    if (!row) break;
    job_ids[j.Text(1)] = j.Int(0);
  }
  return Status::Ok();
}

Status IngestStore::Impl::Prepare() {
  ASSIGN_OR_RETURN(insert_step, db.Prepare(
      "INSERT OR IGNORE INTO steps VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
      "?,?,?,?,?,?,?,?)"));
  ASSIGN_OR_RETURN(upsert_stream, db.Prepare(
      "INSERT INTO streams VALUES(?,?,?,?,?,?) ON CONFLICT(job, rank, epoch) "
      "DO UPDATE SET last_seq=excluded.last_seq, "
      "lost_dropped=excluded.lost_dropped, "
      "lost_unexplained=excluded.lost_unexplained"));
  ASSIGN_OR_RETURN(upsert_rank, db.Prepare(
      "INSERT OR REPLACE INTO ranks VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
      "?,?)"));
  ASSIGN_OR_RETURN(insert_job, db.Prepare(
      "INSERT INTO jobs(name, first_seen_ns, last_seen_ns) VALUES(?,?,?)"));
  ASSIGN_OR_RETURN(touch_job, db.Prepare(
      "UPDATE jobs SET last_seen_ns=?, world_size=MAX(world_size, ?), "
      "usd_per_gpu_hour=CASE WHEN ?>0 THEN ? ELSE usd_per_gpu_hour END "
      "WHERE id=?"));
  return Status::Ok();
}

Result<int64_t> IngestStore::Impl::JobId(const std::string& name,
                                         std::vector<std::string>* new_jobs) {
  if (auto it = job_ids.find(name); it != job_ids.end()) return it->second;
  const int64_t now = NowNs();
  RETURN_IF_ERROR(insert_job.Bind(1, name).Bind(2, now).Bind(3, now).Run());
  ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT last_insert_rowid()"));
  ASSIGN_OR_RETURN(bool row, q.Step());
  (void)row;
  const int64_t id = q.Int(0);
  job_ids[name] = id;
  new_jobs->push_back(name);
  return id;
}

Status IngestStore::Impl::StoreStep(int64_t job, const RecordHeader& h,
                                    const AgentBatch& b) {
  const ingest::agent::StepRecord& s = b.steps[static_cast<size_t>(h.index)];
  int64_t coll_n = 0;
  for (int32_t n : s.coll_n) coll_n += n;
  Stmt& st = insert_step;
  st.Bind(1, job).Bind(2, s.step).Bind(3, int64_t{h.rank}).Bind(4, h.epoch);
  st.Bind(5, h.seq).Bind(6, s.t_end_ns).Bind(7, s.step_ns).Bind(8, s.data_ns);
  st.Bind(9, s.fwd_ns).Bind(10, s.bwd_ns).Bind(11, s.opt_ns);
  st.Bind(12, s.gc_ns).Bind(13, int64_t{s.gc_n}).Bind(14, int64_t{s.gc_gen});
  for (size_t g = 0; g < trace::kCollGroups; ++g) {
    st.Bind(15 + static_cast<int>(g), s.coll_ns[g]);
  }
  st.Bind(21, coll_n).Bind(22, s.tokens).Bind(23, s.seqs).Bind(24, s.sum_s2);
  st.Bind(25, int64_t{s.flags}).Bind(26, int64_t{s.gpu_clock ? 1 : 0});
  return st.Run();
}

Status IngestStore::Impl::StoreRank(int64_t job, const RecordHeader& h,
                                    const AgentBatch& b) {
  const ingest::agent::RankInfo& r = b.ranks[static_cast<size_t>(h.index)];
  Stmt& st = upsert_rank;
  st.Bind(1, job).Bind(2, int64_t{h.rank}).Bind(3, h.epoch);
  st.Bind(4, int64_t{r.dp}).Bind(5, int64_t{r.pp}).Bind(6, int64_t{r.tp});
  st.Bind(7, int64_t{r.cp}).Bind(8, int64_t{r.dp_size});
  st.Bind(9, int64_t{r.pp_size}).Bind(10, int64_t{r.tp_size});
  st.Bind(11, int64_t{r.cp_size}).Bind(12, int64_t{r.world_size});
  st.Bind(13, int64_t{r.local_rank}).Bind(14, int64_t{r.microbatches});
  st.Bind(15, r.pid).Bind(16, r.host).Bind(17, r.device);
  st.Bind(18, r.torch_version).Bind(19, r.agent_version);
  st.Bind(20, r.usd_per_gpu_hour);
  RETURN_IF_ERROR(st.Run());
  touch_job.Bind(1, NowNs()).Bind(2, int64_t{r.world_size});
  touch_job.Bind(3, r.usd_per_gpu_hour).Bind(4, r.usd_per_gpu_hour);
  return touch_job.Bind(5, job).Run();
}

// Stores the fresh records of one request, in line order, advancing the
// streams; what it changed in memory goes to `undo` first.
Status IngestStore::Impl::Apply(
    Pending* p, std::vector<int64_t>* ids, std::vector<uint8_t>* fresh,
    std::vector<std::pair<StreamKey, StreamState>>* undo,
    std::vector<std::string>* new_jobs) {
  const AgentBatch& b = p->batch;
  ids->clear();
  for (const std::string& name : b.jobs) {
    ASSIGN_OR_RETURN(int64_t id, JobId(name, new_jobs));
    ids->push_back(id);
  }
  fresh->assign(b.records.size(), 0);
  for (size_t i = 0; i < b.records.size(); ++i) {
    const RecordHeader& h = b.records[i];
    const StreamKey key{(*ids)[static_cast<size_t>(h.job)], h.rank, h.epoch};
    auto [it, inserted] = streams.try_emplace(key);
    if (touched.insert(key).second) {
      undo->push_back({key, inserted ? StreamState{-1, 0, 0} : it->second});
    }
    StreamState& st = it->second;
    if (h.seq <= st.last_seq) {
      ++p->result.duplicates;
      continue;
    }
    const int64_t first =
        h.kind == RecordKind::kDrop ? b.drops[static_cast<size_t>(h.index)].first_seq
                                    : h.seq;
    if (first > st.last_seq + 1) {
      st.lost_unexplained += first - st.last_seq - 1;
      p->result.lost_unexplained += first - st.last_seq - 1;
    }
    if (h.kind == RecordKind::kStep) {
      RETURN_IF_ERROR(StoreStep(key.job, h, b));
    } else if (h.kind == RecordKind::kRank) {
      RETURN_IF_ERROR(StoreRank(key.job, h, b));
    } else {
      const int64_t n = h.seq - std::max(first, st.last_seq + 1) + 1;
      st.lost_dropped += n;
      p->result.lost_dropped += n;
    }
    st.last_seq = h.seq;
    (*fresh)[i] = 1;
    ++p->result.stored;
  }
  return Status::Ok();
}

void IngestStore::Impl::Loop() {
  std::unique_lock<std::mutex> lock(mu);
  while (true) {
    wake_writer.wait(lock, [&] {
      return stopping || !queue.empty() || !tasks.empty();
    });
    if (queue.empty() && tasks.empty() && stopping) return;
    std::vector<Pending*> items(queue.begin(), queue.end());
    queue.clear();
    std::vector<std::function<Status(Db&)>> todo;
    todo.swap(tasks);
    lock.unlock();
    Commit(items, todo);
    lock.lock();
    for (Pending* p : items) {
      queued_records -= static_cast<int64_t>(p->batch.records.size());
      p->done = true;
    }
    stats.queue_records = queued_records;
    wake_handlers.notify_all();
  }
}

// One transaction for every queued request and task. On failure nothing of
// the requests is stored and the streams are as before.
void IngestStore::Impl::Commit(std::vector<Pending*>& items,
                               std::vector<std::function<Status(Db&)>>& todo) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<StreamKey, StreamState>> undo;
  std::vector<std::string> new_jobs;
  std::vector<std::vector<int64_t>> ids(items.size());
  std::vector<std::vector<uint8_t>> fresh(items.size());
  touched.clear();
  Status s = db.Exec("BEGIN IMMEDIATE");
  for (size_t i = 0; s.ok() && i < items.size(); ++i) {
    s = Apply(items[i], &ids[i], &fresh[i], &undo, &new_jobs);
  }
  for (const StreamKey& key : touched) {
    if (!s.ok()) break;
    const StreamState& st = streams[key];
    upsert_stream.Bind(1, key.job).Bind(2, int64_t{key.rank});
    upsert_stream.Bind(3, key.epoch).Bind(4, st.last_seq);
    upsert_stream.Bind(5, st.lost_dropped).Bind(6, st.lost_unexplained);
    s = upsert_stream.Run();
  }
  int64_t failed_tasks = 0;
  for (auto& task : todo) {
    if (!s.ok()) break;
    if (!db.Exec("SAVEPOINT task").ok()) continue;
    if (task(db).ok()) {
      (void)db.Exec("RELEASE task");
    } else {
      ++failed_tasks;
      (void)db.Exec("ROLLBACK TO task");
      (void)db.Exec("RELEASE task");
    }
  }
  if (s.ok()) s = db.Exec("COMMIT");
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
  std::unique_lock<std::mutex> guard(mu);
  if (!s.ok()) {
    (void)db.Exec("ROLLBACK");
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (it->second.last_seq < 0) {
        streams.erase(it->first);
      } else {
        streams[it->first] = it->second;
      }
    }
    for (const std::string& name : new_jobs) job_ids.erase(name);
    for (Pending* p : items) {
      p->result = WriteResult{WriteOutcome::kFailed, 0, 0, 0, 0, s.message()};
    }
    ++stats.failed_commits;
    return;
  }
  ++stats.commits;
  stats.failed_commits += failed_tasks;
  stats.commit_seconds_sum += seconds;
  for (size_t b = 0; b < std::size(kCommitBucketsS); ++b) {
    if (seconds <= kCommitBucketsS[b]) ++stats.commit_buckets[b];
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const WriteResult& r = items[i]->result;
    stats.records_stored += r.stored;
    stats.duplicates += r.duplicates;
    stats.lost_dropped += r.lost_dropped;
    stats.lost_unexplained += r.lost_unexplained;
  }
  guard.unlock();
  // The handlers wait for `done`, set by Loop after this: the batches stay
  // alive while the sink reads them.
  for (size_t i = 0; sink && i < items.size(); ++i) {
    sink(items[i]->batch, fresh[i], ids[i]);
  }
}

IngestStore::IngestStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<IngestStore>> IngestStore::Open(
    const std::string& path, const StoreOptions& options, CommitSink sink) {
  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->db, OpenWriterDb(path, options.full_sync));
  impl->options = options;
  impl->sink = std::move(sink);
  impl->stats.commit_buckets.assign(std::size(kCommitBucketsS), 0);
  RETURN_IF_ERROR(impl->Load());
  RETURN_IF_ERROR(impl->Prepare());
  Impl* raw = impl.get();
  impl->writer = std::thread([raw] { raw->Loop(); });
  return std::unique_ptr<IngestStore>(new IngestStore(std::move(impl)));
}

IngestStore::~IngestStore() {
  {
    std::lock_guard<std::mutex> guard(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake_writer.notify_all();
  if (impl_->writer.joinable()) impl_->writer.join();
}

WriteResult IngestStore::Write(ingest::agent::AgentBatch batch) {
  Pending p;
  const auto n = static_cast<int64_t>(batch.records.size());
  p.batch = std::move(batch);
  std::unique_lock<std::mutex> lock(impl_->mu);
  if (impl_->stopping ||
      (impl_->queued_records > 0 &&
       impl_->queued_records + n > impl_->options.max_queue_records)) {
    return WriteResult{WriteOutcome::kBusy, 0, 0, 0, 0, "writer queue full"};
  }
  impl_->queued_records += n;
  impl_->stats.queue_records = impl_->queued_records;
  impl_->queue.push_back(&p);
  impl_->wake_writer.notify_one();
  impl_->wake_handlers.wait(lock, [&] { return p.done; });
  return p.result;
}

void IngestStore::Post(std::function<Status(Db&)> task) {
  {
    std::lock_guard<std::mutex> guard(impl_->mu);
    impl_->tasks.push_back(std::move(task));
  }
  impl_->wake_writer.notify_one();
}

StoreStats IngestStore::Stats() const {
  std::lock_guard<std::mutex> guard(impl_->mu);
  return impl_->stats;
}

const std::string& IngestStore::path() const { return impl_->db.path(); }

}  // namespace strag::serve
