// SPDX-License-Identifier: Apache-2.0
#include "serve/live/job_monitor.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace strag::serve {

namespace online = diagnose::online;

JobMonitor::JobMonitor(std::string name, int64_t db_id, MonitorOptions options)
    : name_(std::move(name)),
      db_id_(db_id),
      options_(options),
      detector_(options.detector),
      microbatches_(options.detector.microbatches),
      usd_per_gpu_hour_(options.usd_per_gpu_hour) {}

void JobMonitor::AddRank(int32_t rank, int64_t epoch,
                         const ingest::agent::RankInfo& info) {
  std::lock_guard<std::mutex> guard(mu_);
  ranks_[rank] = info;
  epochs_[rank] = epoch;
  if (info.usd_per_gpu_hour > 0) usd_per_gpu_hour_ = info.usd_per_gpu_hour;
  // Nodes are numbered by host name, in the order the hosts appear.
  int32_t node = -1;
  if (!info.host.empty()) {
    auto [it, fresh] = hosts_.try_emplace(info.host,
                                          static_cast<int32_t>(hosts_.size()));
    node = it->second;
  }
  const diagnose::online::RankPlace place{rank, info.dp, info.pp, info.tp, node};
  places_[rank] = place;
  // The stage excess needs the microbatch count; the agents register
  // before their first step, so the detector can still start over.
  if (info.microbatches > 0 && info.microbatches != microbatches_ &&
      last_closed_ < 0) {
    microbatches_ = info.microbatches;
    diagnose::online::OnlineOptions o = options_.detector;
    o.microbatches = microbatches_;
    detector_ = diagnose::online::OnlineDetector(o);
    for (const auto& [r, p] : places_) detector_.SetPlace(p);
    return;
  }
  detector_.SetPlace(place);
}

void JobMonitor::AddStep(int32_t rank, int64_t epoch,
                         const ingest::agent::StepRecord& s, double now_s) {
  std::lock_guard<std::mutex> guard(mu_);
  (void)epoch;
  last_record_s_ = now_s;
  seen_.insert(rank);
  if (s.step <= last_closed_) {
    ++late_records_;
    return;
  }
  online::RankStep r;
  r.rank = rank;
  r.t_end_ns = s.t_end_ns;
  r.step_ns = s.step_ns;
  r.data_ns = s.data_ns;
  r.fwd_ns = s.fwd_ns;
  r.bwd_ns = s.bwd_ns;
  r.opt_ns = s.opt_ns;
  r.gc_ns = s.gc_ns;
  r.coll_ns = s.coll_ns;
  r.tokens = s.tokens;
  r.sum_s2 = s.sum_s2;
  r.flags = s.flags;
  OpenStep& open = open_[s.step];
  if (open.ranks.empty()) open.first_s = now_s;
  open.ranks[rank] = r;
  max_seen_ = std::max(max_seen_, s.step);
}

void JobMonitor::ClearEvents() {
  std::lock_guard<std::mutex> guard(mu_);
  alerts_.clear();
  captures_.clear();
  last_capture_s_ = -1e300;
}

std::vector<ClosedStep> JobMonitor::Tick(double now_s) {
  std::lock_guard<std::mutex> guard(mu_);
  std::vector<ClosedStep> out;
  const size_t known = std::max(ranks_.size(), seen_.size());
  while (!open_.empty()) {
    const auto& [step, open] = *open_.begin();
    const bool everyone = open.ranks.size() >= known;
    const bool due = now_s - open.first_s >= options_.close_after_s;
    const bool quiet = now_s - last_record_s_ >= options_.grace_s;
    const bool backlog =
        static_cast<int64_t>(open_.size()) > options_.max_open_steps;
    if (!everyone && !due && !quiet && !backlog) break;
    CloseUpTo(step, &out);
  }
  for (const ClosedStep& c : out) {
    for (const online::AlertEvent& e : c.events) MaybeCapture(e, now_s);
  }
  return out;
}

void JobMonitor::CloseUpTo(int64_t step, std::vector<ClosedStep>* out) {
  std::vector<online::RankStep> records;
  while (!open_.empty() && open_.begin()->first <= step) {
    auto node = open_.extract(open_.begin());
    records.clear();
    for (const auto& [rank, r] : node.mapped().ranks) records.push_back(r);
    online::StepResult result = detector_.CloseStep(node.key(), records);
    last_closed_ = node.key();
    history_.push_back(result.summary);
    while (static_cast<int32_t>(history_.size()) > options_.history_steps) {
      history_.pop_front();
    }
    for (const online::AlertEvent& e : result.events) alerts_.push_back(e);
    // The dashboard shows the recent ones; the database keeps them all.
    constexpr size_t kMaxEvents = 1000;
    if (alerts_.size() > kMaxEvents) {
      alerts_.erase(alerts_.begin(),
                    alerts_.end() - static_cast<ptrdiff_t>(kMaxEvents));
    }
    out->push_back({result.summary, std::move(result.events)});
  }
}

void JobMonitor::MaybeCapture(const online::AlertEvent& event, double now_s) {
  if (!options_.captures || !event.firing ||
      event.name != online::AlertName::kStragglerPersistent ||
      event.ranks.empty() ||
      now_s - last_capture_s_ < options_.capture_every_s) {
    return;
  }
  std::vector<int32_t> ranks(event.ranks.begin(),
                             event.ranks.begin() +
                                 std::min<ptrdiff_t>(8, std::ssize(event.ranks)));
  // One healthy peer: the first rank of the suspect's pipeline stage that
  // is not a suspect (stage unknown: any other rank).
  const int32_t suspect = ranks.front();
  const auto info = ranks_.find(suspect);
  const int32_t stage = info == ranks_.end() ? -1 : info->second.pp;
  for (int32_t r : seen_) {
    if (std::find(ranks.begin(), ranks.end(), r) != ranks.end()) continue;
    const auto it = ranks_.find(r);
    if (stage >= 0 && it != ranks_.end() && it->second.pp != stage) continue;
    ranks.push_back(r);
    break;
  }
  OrderLocked(ranks, event.id, now_s);
}

std::optional<CaptureOrder> JobMonitor::OrderCapture(
    const std::vector<int32_t>& ranks, int64_t alert_id, double now_s) {
  std::lock_guard<std::mutex> guard(mu_);
  if (ranks.empty()) return std::nullopt;
  return OrderLocked(ranks, alert_id, now_s);
}

CaptureOrder JobMonitor::OrderLocked(const std::vector<int32_t>& ranks,
                                     int64_t alert_id, double now_s) {
  CaptureOrder order;
  order.id = "cap-" + std::to_string(captures_.size() + 1);
  order.alert_id = alert_id;
  order.ranks = ranks;
  order.start_step = std::max(max_seen_, int64_t{0}) + CaptureLead();
  order.steps = options_.capture_steps;
  order.created_s = now_s;
  last_capture_s_ = now_s;
  captures_.push_back(order);
  return order;
}

// The agents see an order on their next acknowledgement, up to two flush
// intervals after it is made, and may be that far ahead of the newest step
// here: the capture starts far enough ahead for every rank to be in time.
int64_t JobMonitor::CaptureLead() const {
  const double step_s = detector_.View().mean_step_s;
  const double lead_s = 2 * options_.flush_interval_s + 2;
  const int64_t by_time =
      step_s > 0 ? static_cast<int64_t>(std::ceil(lead_s / step_s)) + 1 : 0;
  return std::max<int64_t>(options_.capture_lead, std::min<int64_t>(by_time, 1000));
}

std::vector<CaptureOrder> JobMonitor::OpenOrders() const {
  std::lock_guard<std::mutex> guard(mu_);
  std::vector<CaptureOrder> out;
  for (const CaptureOrder& c : captures_) {
    // Still worth sending while the job has not gone far past it.
    if ((c.state == "ordered" || c.state == "uploading") &&
        max_seen_ < c.start_step + c.steps + 100) {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<CaptureOrder> JobMonitor::MarkUploaded(
    const std::string& capture_id, int32_t rank) {
  std::lock_guard<std::mutex> guard(mu_);
  for (CaptureOrder& c : captures_) {
    if (c.id != capture_id) continue;
    if (std::find(c.uploaded.begin(), c.uploaded.end(), rank) ==
        c.uploaded.end()) {
      c.uploaded.push_back(rank);
    }
    c.state = "uploading";
    if (c.uploaded.size() >= c.ranks.size()) {
      c.state = "analysing";
      return c;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool JobMonitor::HasCapture(const std::string& capture_id, int32_t rank) const {
  std::lock_guard<std::mutex> guard(mu_);
  for (const CaptureOrder& c : captures_) {
    if (c.id == capture_id) {
      return std::find(c.ranks.begin(), c.ranks.end(), rank) != c.ranks.end();
    }
  }
  return false;
}

void JobMonitor::SetCaptureResult(const std::string& capture_id,
                                  const std::string& state,
                                  const std::string& summary) {
  std::lock_guard<std::mutex> guard(mu_);
  for (CaptureOrder& c : captures_) {
    if (c.id == capture_id) {
      c.state = state;
      c.summary = summary;
    }
  }
}

JobMonitor::Snapshot JobMonitor::Snap(int64_t since_step) const {
  std::lock_guard<std::mutex> guard(mu_);
  Snapshot s;
  s.name = name_;
  s.view = detector_.View();
  constexpr size_t kMaxSteps = 600;
  for (auto it = history_.rbegin();
       it != history_.rend() && it->step > since_step && s.steps.size() < kMaxSteps;
       ++it) {
    s.steps.push_back(*it);
  }
  std::reverse(s.steps.begin(), s.steps.end());
  s.alerts = alerts_;
  s.captures = captures_;
  s.ranks = static_cast<int32_t>(std::max(ranks_.size(), seen_.size()));
  s.reporting = history_.empty() ? 0 : history_.back().reporting;
  s.late_records = late_records_;
  s.usd_per_gpu_hour = usd_per_gpu_hour_;
  s.gpus = s.ranks;
  s.last_record_s = last_record_s_;
  return s;
}

}  // namespace strag::serve
