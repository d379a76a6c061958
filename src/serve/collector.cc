// SPDX-License-Identifier: Apache-2.0
#include "serve/collector.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "base/json_writer.h"
#include "ingest/agent/agent_parser.h"
#include "serve/capture_runner.h"
#include "serve/dashboard_html.h"
#include "serve/http_util.h"
#include "serve/live_json.h"
#include "serve/metrics_text.h"
#include "serve/store/history.h"
#include "serve/store/schema.h"

namespace strag::serve {

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct Collector::Impl {
  CollectorOptions o;
  std::unique_ptr<IngestStore> store;
  httplib::Server http;
  std::thread server_thread, live_thread;
  std::mutex jobs_mu;
  std::map<std::string, std::unique_ptr<JobMonitor>, std::less<>> jobs;
  std::mutex stats_mu;
  HttpStats stats;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopping = false;
  int port = 0;
  double start_unix = UnixNow();
  CaptureRunner captures;

  JobMonitor* Monitor(const std::string& name, int64_t db_id);
  JobMonitor* Find(std::string_view name);
  std::vector<JobMonitor::Snapshot> Snapshots(int64_t since);
  void OnCommit(const ingest::agent::AgentBatch& b,
                const std::vector<uint8_t>& fresh,
                const std::vector<int64_t>& ids);
  void LiveLoop();
  Status Recover();
  void Routes();
  void Limits();
  void AgentRoutes();
  void ReadRoutes();
  void TimeIngest(double seconds);
  void Capture(const httplib::Request& req, httplib::Response& res);
  bool Authorized(const httplib::Request& req, bool api);
  void Ingest(const httplib::Request& req, httplib::Response& res);
  void Trace(const httplib::Request& req, httplib::Response& res);
  std::string Ack(const WriteResult& r, const std::vector<std::string>& jobs);
  void Count(int status);
};

JobMonitor* Collector::Impl::Monitor(const std::string& name, int64_t db_id) {
  std::lock_guard<std::mutex> guard(jobs_mu);
  auto& m = jobs[name];
  if (!m) m = std::make_unique<JobMonitor>(name, db_id, o.monitor);
  return m.get();
}

JobMonitor* Collector::Impl::Find(std::string_view name) {
  std::lock_guard<std::mutex> guard(jobs_mu);
  auto it = jobs.find(name);
  return it == jobs.end() ? nullptr : it->second.get();
}

std::vector<JobMonitor::Snapshot> Collector::Impl::Snapshots(int64_t since) {
  std::vector<JobMonitor*> all;
  {
    std::lock_guard<std::mutex> guard(jobs_mu);
    for (auto& [name, m] : jobs) all.push_back(m.get());
  }
  std::vector<JobMonitor::Snapshot> out;
  for (JobMonitor* m : all) out.push_back(m->Snap(since));
  return out;
}

void Collector::Impl::OnCommit(const ingest::agent::AgentBatch& b,
                               const std::vector<uint8_t>& fresh,
                               const std::vector<int64_t>& ids) {
  const double now = SteadyNow();
  // One lookup per job of the batch, not per record.
  std::vector<JobMonitor*> monitors;
  for (size_t j = 0; j < b.jobs.size(); ++j) {
    monitors.push_back(Monitor(b.jobs[j], ids[j]));
  }
  for (size_t i = 0; i < b.records.size(); ++i) {
    if (!fresh[i]) continue;
    const ingest::agent::RecordHeader& h = b.records[i];
    JobMonitor* m = monitors[static_cast<size_t>(h.job)];
    const auto k = static_cast<size_t>(h.index);
    if (h.kind == ingest::agent::RecordKind::kRank) {
      m->AddRank(h.rank, h.epoch, b.ranks[k]);
    } else if (h.kind == ingest::agent::RecordKind::kStep) {
      m->AddStep(h.rank, h.epoch, b.steps[k], now);
    }
  }
}

// After a restart: the detector's windows refilled from the last steps
// stored (their alerts are not raised again: the step aggregates and
// alerts of those steps are in the database already).
Status Collector::Impl::Recover() {
  ASSIGN_OR_RETURN(Db db, OpenReaderDb(o.db_path));
  const int64_t window = std::max<int64_t>(o.monitor.detector.window_steps, 600);
  ASSIGN_OR_RETURN(std::vector<RecentJob> recent,
                   LoadRecent(db, window, 20'000'000));
  for (const RecentJob& job : recent) {
    JobMonitor* m = Monitor(job.name, job.id);
    for (const RecentJob::Rank& r : job.ranks) m->AddRank(r.rank, r.epoch, r.info);
    for (const RecentJob::Step& s : job.steps) m->AddStep(s.rank, s.epoch, s.record, 0);
    (void)m->Tick(1e300);  // closes every step it was given
    m->ClearEvents();
  }
  return Status::Ok();
}

// Closes due steps of every job a few times a second and hands their
// aggregates and alerts to the writer; applies retention once a minute.
void Collector::Impl::LiveLoop() {
  double last_retention = SteadyNow();
  std::unique_lock<std::mutex> lock(stop_mu);
  while (!stopping) {
    stop_cv.wait_for(lock, std::chrono::milliseconds(200));
    if (stopping) break;
    lock.unlock();
    std::vector<JobMonitor*> all;
    {
      std::lock_guard<std::mutex> guard(jobs_mu);
      for (auto& [name, m] : jobs) all.push_back(m.get());
    }
    const double now = SteadyNow();
    for (JobMonitor* m : all) {
      std::vector<ClosedStep> closed = m->Tick(now);
      if (!closed.empty()) {
        store->Post([id = m->db_id(), c = std::move(closed)](Db& db) {
          return StoreClosedSteps(db, id, c);
        });
      }
    }
    if (now - last_retention > 60) {
      last_retention = now;
      const double keep_s = o.retention_hours * 3600;
      store->Post([keep_s](Db& db) { return ApplyRetention(db, keep_s); });
    }
    lock.lock();
  }
}

bool Collector::Impl::Authorized(const httplib::Request& req, bool api) {
  if (o.token.empty()) return true;
  if (!api && IsLoopback(o.host)) return true;
  const std::string auth = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.rfind(kBearer, 0) != 0) return false;
  return SameToken(std::string_view(auth).substr(kBearer.size()), o.token);
}

void Collector::Impl::Count(int status) {
  std::lock_guard<std::mutex> guard(stats_mu);
  ++stats.requests_by_code[status];
}

std::string Collector::Impl::Ack(const WriteResult& r,
                                 const std::vector<std::string>& job_names) {
  JsonWriter w(0);
  w.BeginObject();
  w.Key("ok");
  w.Bool(true);
  w.FieldInt("stored", r.stored);
  w.FieldInt("duplicates", r.duplicates);
  w.Field("flush_interval_s", o.flush_interval_s);
  w.Key("commands");
  w.BeginArray();
  for (const std::string& name : job_names) {
    JobMonitor* m = Find(name);
    if (m == nullptr) continue;
    for (const CaptureOrder& c : m->OpenOrders()) {
      w.BeginObject();
      w.FieldString("type", "capture");
      w.FieldString("id", c.id);
      w.FieldString("job", name);
      w.FieldIntArray("ranks", c.ranks);
      w.FieldInt("start_step", c.start_step);
      w.FieldInt("steps", c.steps);
      w.FieldString("upload", "/v1/traces?job=" + name + "&capture=" + c.id);
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

void Collector::Impl::Ingest(const httplib::Request& req,
                             httplib::Response& res) {
  if (!Authorized(req, true)) {
    return JsonError(res, 401, "missing or wrong bearer token");
  }
  std::string body;
  if (!Inflate(req, o.max_inflated_bytes, &body, res)) return;
  int64_t lines = 0;
  for (char c : body) lines += c == '\n';
  if (lines > o.max_records + 1) {
    return JsonError(res, 413,
                     "more than " + std::to_string(o.max_records) +
                         " records in one request; send smaller batches");
  }
  thread_local ingest::agent::AgentParser parser(
      {o.max_records, 64 * 1024, (1 << 24) - 1});
  Result<ingest::agent::AgentBatch> batch = parser.Parse(body);
  if (!batch.ok()) {
    {
      std::lock_guard<std::mutex> guard(stats_mu);
      stats.records_rejected += lines;
    }
    return JsonError(res, 400, batch.status().message());
  }
  ingest::agent::AgentBatch b = std::move(batch).value();
  const std::vector<std::string> jobs_in = b.jobs;
  WriteResult r = store->Write(std::move(b));
  if (r.outcome == WriteOutcome::kBusy) {
    res.set_header("Retry-After", "1");
    return JsonError(res, 503, "the writer is busy; retry");
  }
  if (r.outcome == WriteOutcome::kFailed) {
    return JsonError(res, 500, "not stored: " + r.error);
  }
  res.set_content(Ack(r, jobs_in), "application/json");
}

void Collector::Impl::Trace(const httplib::Request& req,
                            httplib::Response& res) {
  if (!Authorized(req, true)) {
    return JsonError(res, 401, "missing or wrong bearer token");
  }
  const std::string job = req.get_param_value("job");
  const std::string id = req.get_param_value("capture");
  const int64_t rank = ParamInt(req, "rank", -1);
  JobMonitor* m = Find(job);
  if (m == nullptr || rank < 0 || rank > (1 << 24) ||
      !m->HasCapture(id, static_cast<int32_t>(rank))) {
    return JsonError(res, 404, "no capture '" + id + "' of job '" + job +
                                   "' asks for rank " + std::to_string(rank));
  }
  std::string body;
  if (!Inflate(req, o.max_trace_inflated_bytes, &body, res)) return;
  Result<std::string> dir = captures.SaveTrace(job, id, static_cast<int32_t>(rank),
                                               body);
  if (!dir.ok()) return JsonError(res, 500, dir.status().message());
  res.status = 201;
  res.set_content("{\"ok\":true}\n", "application/json");
  if (std::optional<CaptureOrder> done =
          m->MarkUploaded(id, static_cast<int32_t>(rank))) {
    captures.Analyse(dir.value(), [this, m, id, db = m->db_id()](
                                      const std::string& state,
                                      const std::string& summary) {
      m->SetCaptureResult(id, state, summary);
      store->Post([db, id, state, summary](Db& d) {
        return StoreCaptureResult(d, db, id, state, summary);
      });
    });
  }
}

void Collector::Impl::Routes() {
  Limits();
  AgentRoutes();
  ReadRoutes();
}

void Collector::Impl::Limits() {
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(1000);
  http.set_read_timeout(5, 0);
  http.set_write_timeout(5, 0);
  http.set_payload_max_length(static_cast<size_t>(
      std::max(o.max_body_bytes, o.max_trace_bytes)));
  const int threads = o.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // httplib would inflate Content-Encoding bodies without a cap (a small
  // gzip bomb becomes a large body): refuse them before the body is read.
  http.set_pre_routing_handler([this](const httplib::Request& req,
                                      httplib::Response& res) {
    const std::string enc = req.get_header_value("Content-Encoding");
    if (!enc.empty() && enc != "identity") {
      JsonError(res, 413, "Content-Encoding is not accepted; send the raw "
                          "gzip body with X-Strag-Encoding: gzip");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.path == "/v1/ingest" && req.has_header("Content-Length") &&
        ToInt(req.get_header_value("Content-Length"), 0) > o.max_body_bytes) {
      JsonError(res, 413, "body larger than " +
                              std::to_string(o.max_body_bytes) + " bytes");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    Count(res.status);
  });
}

void Collector::Impl::AgentRoutes() {
  http.Post("/v1/ingest", [this](const httplib::Request& req,
                                 httplib::Response& res) {
    const double t0 = SteadyNow();
    Ingest(req, res);
    TimeIngest(SteadyNow() - t0);
  });
  http.Post("/v1/traces", [this](const httplib::Request& req,
                                 httplib::Response& res) { Trace(req, res); });
  http.Post(R"(/api/v1/jobs/([A-Za-z0-9._:-]+)/capture)",
            [this](const httplib::Request& req, httplib::Response& res) {
              Capture(req, res);
            });
}

void Collector::Impl::ReadRoutes() {
  http.Get("/metrics", [this](const httplib::Request& req,
                              httplib::Response& res) {
    if (!Authorized(req, false)) return JsonError(res, 401, "token needed");
    HttpStats h;
    {
      std::lock_guard<std::mutex> guard(stats_mu);
      h = stats;
    }
    res.set_content(RenderMetrics(Snapshots(INT64_MAX), store->Stats(), h,
                                  ReadProcessStats(start_unix, o.db_path)),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/api/v1/jobs", [this](const httplib::Request& req,
                                  httplib::Response& res) {
    if (!Authorized(req, false)) return JsonError(res, 401, "token needed");
    res.set_content(JobsJson(Snapshots(INT64_MAX)), "application/json");
  });
  http.Get(R"(/api/v1/jobs/([A-Za-z0-9._:-]+)/live)",
           [this](const httplib::Request& req, httplib::Response& res) {
             if (!Authorized(req, false)) return JsonError(res, 401, "token needed");
             JobMonitor* m = Find(req.matches[1].str());
             if (m == nullptr) return JsonError(res, 404, "no such job");
             const int64_t since = ParamInt(req, "since_step", -1);
             const std::string body = LiveJson(m->Snap(since), since);
             // Polling viewers of an idle job get 304 Not Modified.
             const std::string etag = ETagOf(body);
             res.set_header("ETag", etag);
             res.set_header("Cache-Control", "no-cache");
             if (req.get_header_value("If-None-Match") == etag) {
               res.status = 304;
               return;
             }
             res.set_content(body, "application/json");
           });
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  http.Get("/", [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(req, false)) return JsonError(res, 401, "token needed");
    const std::string_view page = DashboardHtml();
    res.set_content(page.data(), page.size(), "text/html; charset=utf-8");
  });
}

void Collector::Impl::TimeIngest(double seconds) {
  std::lock_guard<std::mutex> guard(stats_mu);
  ++stats.ingest_requests;
  stats.ingest_seconds_sum += seconds;
  if (stats.ingest_buckets.empty()) {
    stats.ingest_buckets.assign(std::size(kRequestBucketsS), 0);
  }
  for (size_t b = 0; b < std::size(kRequestBucketsS); ++b) {
    if (seconds <= kRequestBucketsS[b]) ++stats.ingest_buckets[b];
  }
}

// The dashboard's capture button: POST /api/v1/jobs/J/capture?rank=R...
void Collector::Impl::Capture(const httplib::Request& req,
                              httplib::Response& res) {
  if (!Authorized(req, true)) return JsonError(res, 401, "token needed");
  JobMonitor* m = Find(req.matches[1].str());
  if (m == nullptr) return JsonError(res, 404, "no such job");
  std::vector<int32_t> ranks;
  for (size_t i = 0; i < req.get_param_value_count("rank"); ++i) {
    const int64_t r = ToInt(req.get_param_value("rank", i), -1);
    if (r < 0 || r >= (1 << 24)) {
      return JsonError(res, 400, "rank must be 0 to 2^24 - 1");
    }
    ranks.push_back(static_cast<int32_t>(r));
  }
  auto order = m->OrderCapture(ranks, 0, SteadyNow());
  if (!order) return JsonError(res, 400, "name ranks: ?rank=R");
  res.set_content("{\"ok\":true,\"id\":\"" + order->id + "\"}\n",
                  "application/json");
}

Collector::Collector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<Collector>> Collector::Start(const CollectorOptions& o) {
  if (!IsLoopback(o.host) && o.token.empty()) {
    return InvalidInput("listening on " + o.host +
                        " (not loopback) needs a token: --token-file FILE");
  }
  auto impl = std::make_unique<Impl>();
  impl->o = o;
  impl->o.monitor.flush_interval_s = o.flush_interval_s;
  Impl* raw = impl.get();
  ASSIGN_OR_RETURN(impl->store,
                   IngestStore::Open(o.db_path, o.store,
                                     [raw](const auto& b, const auto& f,
                                           const auto& ids) {
                                       raw->OnCommit(b, f, ids);
                                     }));
  RETURN_IF_ERROR(impl->Recover());
  std::string dir = o.captures_dir;
  if (dir.empty()) dir = o.db_path + ".captures";
  impl->captures = CaptureRunner(dir, o.strag_exe);
  impl->Routes();
  impl->port = o.port == 0 ? impl->http.bind_to_any_port(o.host)
                           : (impl->http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (impl->port < 0) {
    return InvalidInput("cannot listen on " + o.host + ":" +
                        std::to_string(o.port) + " (in use, or not an address "
                        "of this machine)");
  }
  impl->server_thread = std::thread([raw] { raw->http.listen_after_bind(); });
  impl->live_thread = std::thread([raw] { raw->LiveLoop(); });
  return std::unique_ptr<Collector>(new Collector(std::move(impl)));
}

int Collector::port() const { return impl_->port; }

void Collector::Wait() {
  std::unique_lock<std::mutex> lock(impl_->stop_mu);
  impl_->stop_cv.wait(lock, [&] { return impl_->stopping; });
}

void Collector::Stop() {
  {
    std::lock_guard<std::mutex> guard(impl_->stop_mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
}

Collector::~Collector() {
  Stop();
  impl_->http.stop();
  if (impl_->server_thread.joinable()) impl_->server_thread.join();
  if (impl_->live_thread.joinable()) impl_->live_thread.join();
  impl_->captures.Join();
}

}  // namespace strag::serve
