// SPDX-License-Identifier: Apache-2.0
// JobMonitor: the live state of one job in the collector. Stored records
// come in (from the IngestStore's commit sink); steps are assembled from
// the ranks' records and closed, in order, when every known rank has
// reported, or `close_after_s` (collector time) after its first record came
// (agents flush every second or so: a rank whose batch is later than that
// is missing from the step, and silent after a few), or when no record
// came for `grace_s`. Each closed
// step goes through the OnlineDetector; the monitor keeps the recent step
// summaries, the alerts, and the capture orders it issues.
//
// Thread-safe (one mutex); the detector runs on the caller of Tick.

#ifndef STRAG_SRC_SERVE_LIVE_JOB_MONITOR_H_
#define STRAG_SRC_SERVE_LIVE_JOB_MONITOR_H_

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "diagnose/online/online_detector.h"
#include "ingest/agent/agent_records.h"

namespace strag::serve {

struct MonitorOptions {
  diagnose::online::OnlineOptions detector = {};
  double close_after_s = 4;    // close a step this long after its first record
  double grace_s = 10;         // or once no record came for this long
  int32_t max_open_steps = 10000;  // beyond: the oldest close at once
  int32_t history_steps = 3600;  // summaries kept for the dashboard
  bool captures = true;        // order a profiler capture on an alert
  int32_t capture_steps = 3;
  int32_t capture_lead = 5;    // at least this many steps between the order
                               // and the capture, and 2 flushes + 2 s
  double capture_every_s = 1800;  // at most one capture per job per this
  double usd_per_gpu_hour = 2.0;  // unless the agents give a price
  double flush_interval_s = 1;    // the agents' (told on every ack)
};

struct CaptureOrder {
  std::string id;  // "cap-<alert>-<n>"
  int64_t alert_id = 0;
  std::vector<int32_t> ranks;  // suspects and one healthy peer
  int64_t start_step = 0;
  int32_t steps = 0;
  double created_s = 0;        // collector clock
  std::string state = "ordered";  // ordered, uploading, analysed, failed
  std::vector<int32_t> uploaded;
  std::string summary;  // the offline report's on-call block
};

// What a step close produced, for the store (aggregates and alerts).
struct ClosedStep {
  diagnose::online::StepSummary summary;
  std::vector<diagnose::online::AlertEvent> events;
};

class JobMonitor {
 public:
  JobMonitor(std::string name, int64_t db_id, MonitorOptions options);

  const std::string& name() const { return name_; }
  int64_t db_id() const { return db_id_; }

  void AddRank(int32_t rank, int64_t epoch,
               const ingest::agent::RankInfo& info);
  void AddStep(int32_t rank, int64_t epoch,
               const ingest::agent::StepRecord& step, double now_s);

  // Forgets the alerts and capture orders seen so far (after a recovery
  // replay: those are in the database already).
  void ClearEvents();

  // Closes the steps that are due; returns them in order.
  std::vector<ClosedStep> Tick(double now_s);

  // The orders the agents of this job should see on their next ack.
  std::vector<CaptureOrder> OpenOrders() const;
  // An uploaded trace; returns the order when every rank has uploaded.
  std::optional<CaptureOrder> MarkUploaded(const std::string& capture_id,
                                           int32_t rank);
  // True when `rank` is one of the ranks capture `capture_id` asked for.
  bool HasCapture(const std::string& capture_id, int32_t rank) const;
  void SetCaptureResult(const std::string& capture_id,
                        const std::string& state, const std::string& summary);
  // Orders a capture now (the dashboard's button, or an alert).
  std::optional<CaptureOrder> OrderCapture(const std::vector<int32_t>& ranks,
                                           int64_t alert_id, double now_s);

  struct Snapshot {
    std::string name;
    diagnose::online::OnlineView view;
    std::vector<diagnose::online::StepSummary> steps;  // since the cursor
    std::vector<diagnose::online::AlertEvent> alerts;  // all, newest last
    std::vector<CaptureOrder> captures;
    int32_t ranks = 0;
    int32_t reporting = 0;        // ranks in the last closed step
    int64_t late_records = 0;     // for steps already closed
    double usd_per_gpu_hour = 0;
    int64_t gpus = 0;
    double last_record_s = 0;     // collector clock
  };
  Snapshot Snap(int64_t since_step) const;

 private:
  void CloseUpTo(int64_t step, std::vector<ClosedStep>* out);
  void MaybeCapture(const diagnose::online::AlertEvent& event, double now_s);
  CaptureOrder OrderLocked(const std::vector<int32_t>& ranks, int64_t alert_id,
                           double now_s);
  int64_t CaptureLead() const;

  const std::string name_;
  const int64_t db_id_;
  const MonitorOptions options_;
  mutable std::mutex mu_;
  diagnose::online::OnlineDetector detector_;
  int32_t microbatches_;  // the detector's
  std::map<int32_t, diagnose::online::RankPlace> places_;
  std::map<int32_t, ingest::agent::RankInfo> ranks_;
  std::map<int32_t, int64_t> epochs_;  // latest epoch per rank
  std::set<int32_t> seen_;             // ranks with a step record
  std::map<std::string, int32_t> hosts_;  // host -> node number
  // Open steps: step -> the records received (one per rank, last wins).
  struct OpenStep {
    double first_s = 0;  // collector time of its first record
    std::map<int32_t, diagnose::online::RankStep> ranks;
  };
  std::map<int64_t, OpenStep> open_;
  int64_t last_closed_ = -1;
  int64_t max_seen_ = -1;
  double last_record_s_ = 0;
  int64_t late_records_ = 0;
  double usd_per_gpu_hour_ = 0;
  std::deque<diagnose::online::StepSummary> history_;
  std::vector<diagnose::online::AlertEvent> alerts_;
  std::vector<CaptureOrder> captures_;
  double last_capture_s_ = -1e300;
};

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_LIVE_JOB_MONITOR_H_
