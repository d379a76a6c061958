// SPDX-License-Identifier: Apache-2.0
#include "serve/metrics_text.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "base/str_format.h"
#include "serve/live_json.h"

namespace strag::serve {
namespace {

namespace online = diagnose::online;
using Snapshot = JobMonitor::Snapshot;

std::string Escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Value(double v) {
  if (v != v) return "NaN";
  return StrFormat("%.17g", v);
}

// One metric family: HELP and TYPE once, then its samples.
class Family {
 public:
  Family(std::string* out, const char* name, const char* type,
         const char* help)
      : out_(out), name_(name) {
    *out_ += StrFormat("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
  }
  void Sample(const std::string& labels, double v, const char* suffix = "") {
    *out_ += name_ + suffix + (labels.empty() ? "" : "{" + labels + "}") +
             " " + Value(v) + "\n";
  }

 private:
  std::string* out_;
  std::string name_;
};

std::string JobLabel(const Snapshot& s) {
  return "train_job=\"" + Escape(s.name) + "\"";
}

void PerJob(std::string* out, const std::vector<Snapshot>& jobs,
            const char* name, const char* type, const char* help,
            const std::function<double(const Snapshot&)>& value) {
  Family f(out, name, type, help);
  for (const Snapshot& s : jobs) f.Sample(JobLabel(s), value(s));
}

void JobFamilies(std::string* out, const std::vector<Snapshot>& jobs) {
  auto gpus = [](const Snapshot& s) { return static_cast<double>(s.gpus); };
  PerJob(out, jobs, "strag_job_step_duration_seconds", "gauge",
         "Duration of the last closed step (the slowest rank's).",
         [](const Snapshot& s) {
           return s.steps.empty() ? s.view.mean_step_s
                                  : static_cast<double>(s.steps.back().step_ns) * 1e-9;
         });
  PerJob(out, jobs, "strag_job_mean_step_seconds", "gauge",
         "Mean step duration over the detection window.",
         [](const Snapshot& s) { return s.view.mean_step_s; });
  PerJob(out, jobs, "strag_job_excess_step_seconds", "gauge",
         "Mean time stragglers add to a step over the window (worker and stage excess).",
         [](const Snapshot& s) { return s.view.mean_excess_s; });
  PerJob(out, jobs, "strag_job_utilization_ratio", "gauge",
         "Ideal over observed step time over the window.",
         [](const Snapshot& s) { return s.view.utilization; });
  PerJob(out, jobs, "strag_job_slowdown_ratio", "gauge",
         "Observed over ideal step time over the window (S).",
         [](const Snapshot& s) { return s.view.slowdown; });
  PerJob(out, jobs, "strag_job_steps_total", "counter",
         "Steps closed and judged by the detector.",
         [](const Snapshot& s) { return static_cast<double>(s.view.steps_closed); });
  PerJob(out, jobs, "strag_job_last_step", "gauge", "The last closed step.",
         [](const Snapshot& s) { return static_cast<double>(s.view.last_step); });
  PerJob(out, jobs, "strag_job_ranks", "gauge", "Ranks known to the collector.",
         [](const Snapshot& s) { return static_cast<double>(s.ranks); });
  PerJob(out, jobs, "strag_job_ranks_reporting", "gauge",
         "Ranks with a record of the last closed step.",
         [](const Snapshot& s) { return static_cast<double>(s.reporting); });
  PerJob(out, jobs, "strag_job_silent_ranks", "gauge",
         "Ranks that stopped reporting.",
         [](const Snapshot& s) { return static_cast<double>(s.view.silent_ranks.size()); });
  PerJob(out, jobs, "strag_job_wasted_gpu_seconds_total", "counter",
         "GPU time lost to stragglers since the collector started.",
         [&](const Snapshot& s) { return s.view.wasted_s * gpus(s); });
  {
    Family f(out, "strag_job_lost_gpu_seconds_total", "counter",
             "GPU time lost, by kind.");
    for (const Snapshot& s : jobs) {
      const std::string l = JobLabel(s);
      f.Sample(l + ",kind=\"sync_wait\"", s.view.lost_sync_wait_s * gpus(s));
      f.Sample(l + ",kind=\"host_delay\"", s.view.lost_host_delay_s * gpus(s));
      f.Sample(l + ",kind=\"compute\"", s.view.lost_compute_s * gpus(s));
    }
  }
  PerJob(out, jobs, "strag_job_price_per_gpu_hour_dollars", "gauge",
         "Price of one GPU-hour; burn in dollars per hour is "
         "rate(strag_job_wasted_gpu_seconds_total[5m]) * this.",
         [](const Snapshot& s) { return s.usd_per_gpu_hour; });
  {
    Family f(out, "strag_job_dominant_cause_info", "gauge",
             "The probable cause of the lost time (value 1).");
    for (const Snapshot& s : jobs) {
      f.Sample(JobLabel(s) + ",cause=\"" +
                   std::string(diagnose::CauseName(s.view.diagnosis.probable_cause)) +
                   "\"",
               1);
    }
  }
  {
    Family f(out, "strag_stage_busy_seconds", "gauge",
             "Median busy time (step minus collectives) per pipeline stage, last step.");
    for (const Snapshot& s : jobs) {
      for (size_t p = 0; p < s.view.stage_busy_s.size(); ++p) {
        f.Sample(JobLabel(s) + ",pp=\"" + std::to_string(p) + "\"",
                 s.view.stage_busy_s[p]);
      }
    }
  }
  {
    Family f(out, "strag_alerts_firing", "gauge", "Alerts firing, by name.");
    for (const Snapshot& s : jobs) {
      for (online::AlertName a :
           {online::AlertName::kStragglerPersistent, online::AlertName::kRankSilent}) {
        double n = 0;
        for (const online::AlertEvent& e : s.view.active) n += e.name == a;
        f.Sample(JobLabel(s) + ",alert=\"" + online::AlertNameText(a) + "\"", n);
      }
    }
  }
}

std::string RankLabels(const Snapshot& s, const online::Suspect& t) {
  return JobLabel(s) + StrFormat(",rank=\"%d\",dp=\"%d\",pp=\"%d\",tp=\"%d\","
                                 "node=\"%d\"",
                                 t.place.rank, t.place.dp, t.place.pp,
                                 t.place.tp, t.place.node);
}

void TopK(std::string* out, const std::vector<Snapshot>& jobs) {
  Family late(out, "strag_straggler_lateness_seconds", "gauge",
              "Mean lateness over the window of a top-k straggler.");
  for (const Snapshot& s : jobs) {
    for (const online::Suspect& t : s.view.top) {
      late.Sample(RankLabels(s, t), t.lateness_ns * 1e-9);
    }
  }
  Family pers(out, "strag_straggler_persistence_ratio", "gauge",
              "Share of recent steps in which a top-k straggler was last.");
  for (const Snapshot& s : jobs) {
    for (const online::Suspect& t : s.view.top) {
      pers.Sample(RankLabels(s, t), t.persistence);
    }
  }
}

void SelfMetrics(std::string* out, const StoreStats& st, const HttpStats& h,
                 const ProcessStats& p) {
  {
    Family f(out, "strag_ingest_records_total", "counter",
             "Records received, by result.");
    f.Sample("result=\"accepted\"", static_cast<double>(st.records_stored));
    f.Sample("result=\"duplicate\"", static_cast<double>(st.duplicates));
    f.Sample("result=\"rejected\"", static_cast<double>(h.records_rejected));
  }
  {
    Family f(out, "strag_ingest_lost_records_total", "counter",
             "Records the collector never got, by reason.");
    f.Sample("reason=\"agent_dropped\"", static_cast<double>(st.lost_dropped));
    f.Sample("reason=\"unexplained\"", static_cast<double>(st.lost_unexplained));
  }
  {
    Family f(out, "strag_http_requests_total", "counter",
             "HTTP requests answered, by status code.");
    for (const auto& [code, n] : h.requests_by_code) {
      f.Sample("code=\"" + std::to_string(code) + "\"", static_cast<double>(n));
    }
  }
  {
    Family f(out, "strag_ingest_request_duration_seconds", "histogram",
             "Time from an ingest request's arrival to its answer.");
    for (size_t b = 0; b < std::size(kRequestBucketsS); ++b) {
      f.Sample("le=\"" + Value(kRequestBucketsS[b]) + "\"",
               static_cast<double>(b < h.ingest_buckets.size() ? h.ingest_buckets[b] : 0),
               "_bucket");
    }
    f.Sample("le=\"+Inf\"", static_cast<double>(h.ingest_requests), "_bucket");
    f.Sample("", h.ingest_seconds_sum, "_sum");
    f.Sample("", static_cast<double>(h.ingest_requests), "_count");
  }
  {
    Family f(out, "strag_db_commit_duration_seconds", "histogram",
             "Duration of one group commit.");
    for (size_t b = 0; b < std::size(kCommitBucketsS); ++b) {
      f.Sample("le=\"" + Value(kCommitBucketsS[b]) + "\"",
               static_cast<double>(st.commit_buckets[b]), "_bucket");
    }
    f.Sample("le=\"+Inf\"", static_cast<double>(st.commits), "_bucket");
    f.Sample("", st.commit_seconds_sum, "_sum");
    f.Sample("", static_cast<double>(st.commits), "_count");
  }
  Family(out, "strag_ingest_queue_records", "gauge",
         "Records waiting for the writer.")
      .Sample("", static_cast<double>(st.queue_records));
  Family(out, "strag_db_size_bytes", "gauge", "Database size (with its WAL).")
      .Sample("", static_cast<double>(p.db_bytes));
  Family(out, "process_cpu_seconds_total", "counter", "CPU time of the collector.")
      .Sample("", p.cpu_seconds);
  Family(out, "process_resident_memory_bytes", "gauge", "Resident memory.")
      .Sample("", p.resident_bytes);
  Family(out, "process_start_time_seconds", "gauge",
         "Start time of the process since the Unix epoch.")
      .Sample("", p.start_time_s);
  Family(out, "process_open_fds", "gauge", "Open file descriptors.")
      .Sample("", static_cast<double>(p.open_fds));
}

int64_t FileBytes(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

ProcessStats ReadProcessStats(double start_time_s, const std::string& db_path) {
  ProcessStats p;
  p.start_time_s = start_time_s;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (std::getline(stat, line)) {
    // Fields after the command (which may hold spaces) start at ") ".
    std::istringstream in(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 24 && in >> field; ++i) {
      if (i == 14 || i == 15) p.cpu_seconds += std::strtod(field.c_str(), nullptr) / tick;
      if (i == 24) {
        p.resident_bytes = std::strtod(field.c_str(), nullptr) * static_cast<double>(sysconf(_SC_PAGESIZE));
      }
    }
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++p.open_fds;
    closedir(d);
    p.open_fds -= 3;  // ".", ".." and the directory itself
  }
  p.db_bytes = FileBytes(db_path) + FileBytes(db_path + "-wal");
  return p;
}

std::string RenderMetrics(const std::vector<Snapshot>& jobs,
                          const StoreStats& store, const HttpStats& http,
                          const ProcessStats& process) {
  std::string out;
  JobFamilies(&out, jobs);
  TopK(&out, jobs);
  SelfMetrics(&out, store, http, process);
  return out;
}

}  // namespace strag::serve
