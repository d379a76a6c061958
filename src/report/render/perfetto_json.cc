// SPDX-License-Identifier: Apache-2.0
#include "report/render/perfetto_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "trace/op_type.h"

namespace strag::report {
namespace {

constexpr int64_t kActualTid = 1;
constexpr int64_t kIdealTid = 2;
// Smallest gap between two steps, so that even empty steps stay apart.
constexpr int64_t kMinStepGapNs = 1000;

struct Worker {
  int32_t dp = 0, pp = 0;
};

// Seconds to whole nanoseconds: Perfetto keeps ns, and integer ns make the
// slice ends of neighbouring ops coincide exactly instead of overlapping by
// a rounding error (a partial overlap spills a slice to another track).
int64_t ToNs(double seconds) {
  if (!std::isfinite(seconds)) return 0;
  return std::llround(seconds * 1e9);
}

int64_t Pid(int32_t rank) { return static_cast<int64_t>(rank) + 1; }

// The trace is one event per line: readable, greppable and diffable, and
// the JSON stays valid whatever the event count.
class EventSink {
 public:
  explicit EventSink(std::string* out) : out_(out) {}

  // Starts an event; finish it with Commit().
  JsonWriter& Begin() {
    w_ = JsonWriter(0);
    w_.BeginObject();
    return w_;
  }
  void Commit() {
    w_.EndObject();
    *out_ += first_ ? "\n" : ",\n";
    first_ = false;
    *out_ += w_.str();
  }

 private:
  std::string* out_;
  JsonWriter w_{0};
  bool first_ = true;
};

void TimeFields(JsonWriter& w, int64_t ts_ns) {
  w.Field("ts", static_cast<double>(ts_ns) / 1000.0);
}

// A metadata ("M") event; tid < 0 makes it process-wide. `value` is the
// name for *_name events, `index` the order for *_sort_index events.
void Metadata(EventSink& sink, std::string_view name, int64_t pid, int64_t tid,
              std::string_view value, int64_t index) {
  JsonWriter& w = sink.Begin();
  w.FieldString("ph", "M");
  w.FieldString("name", name);
  w.FieldInt("pid", pid);
  if (tid >= 0) w.FieldInt("tid", tid);
  w.Key("args");
  w.BeginObject();
  if (name.ends_with("_sort_index")) {
    w.FieldInt("sort_index", index);
  } else {
    w.FieldString("name", value);
  }
  w.EndObject();
  sink.Commit();
}

void WorkerMetadata(EventSink& sink, whatif::Layout layout,
                    const std::map<int32_t, Worker>& workers) {
  for (const auto& [rank, worker] : workers) {
    const int64_t pid = Pid(rank);
    const std::string name =
        whatif::WorkerLabel(layout, rank, worker.dp, worker.pp);
    Metadata(sink, "process_name", pid, -1, name, 0);
    // Lowest first in the UI: rank order.
    Metadata(sink, "process_sort_index", pid, -1, "", rank);
    Metadata(sink, "thread_name", pid, kActualTid,
             "actual (replayed, no launch delays)", 0);
    Metadata(sink, "thread_sort_index", pid, kActualTid, "", kActualTid);
    Metadata(sink, "thread_name", pid, kIdealTid, "ideal", 0);
    Metadata(sink, "thread_sort_index", pid, kIdealTid, "", kIdealTid);
  }
}

std::string SliceName(const whatif::TimelineOp& op) {
  std::string name(trace::OpTypeName(op.type));
  if (op.microbatch >= 0) name += " #" + std::to_string(op.microbatch);
  return name;
}

// Emits `op` as an X slice on `tid`, spanning [start_ns, end_ns) of the axis.
void Slice(EventSink& sink, const whatif::TimelineOp& op, int64_t step,
           int64_t tid, int64_t start_ns, int64_t end_ns) {
  JsonWriter& w = sink.Begin();
  w.FieldString("ph", "X");
  w.FieldString("name", SliceName(op));
  w.FieldString("cat", op.comm ? "comm" : "compute");
  w.FieldInt("pid", Pid(op.rank));
  w.FieldInt("tid", tid);
  TimeFields(w, start_ns);
  w.Field("dur", static_cast<double>(std::max<int64_t>(0, end_ns - start_ns)) /
                     1000.0);
  w.Key("args");
  w.BeginObject();
  w.FieldInt("step", step);
  w.FieldInt("microbatch", op.microbatch);
  w.FieldInt("seq_id", op.seq_id);
  w.Key("critical");
  w.Bool(op.on_critical_path);
  w.EndObject();
  sink.Commit();
}

// One end of a v1 flow. Perfetto binds "s" (and "f" with "bp":"e") to the
// slice open on the thread at `ts_ns`, and a slice counts as closed at its
// end, so callers pass a ts strictly inside the slice.
void FlowEvent(EventSink& sink, bool start, int64_t id, int32_t rank,
               int64_t ts_ns) {
  JsonWriter& w = sink.Begin();
  w.FieldString("ph", start ? "s" : "f");
  if (!start) w.FieldString("bp", "e");
  w.FieldInt("id", id);
  w.FieldString("name", "waited for");
  w.FieldString("cat", "critical-path");
  w.FieldInt("pid", Pid(rank));
  w.FieldInt("tid", kActualTid);
  TimeFields(w, ts_ns);
  sink.Commit();
}

// A global instant at the step's start, so the UI can jump between steps.
void StepMarker(EventSink& sink, const whatif::Timeline& tl, int64_t offset_ns,
                int32_t marker_rank) {
  JsonWriter& w = sink.Begin();
  w.FieldString("ph", "i");
  w.FieldString("s", "g");
  w.FieldString("name", "step " + std::to_string(tl.step));
  // A real worker's pid: no phantom process 0 in the process list.
  w.FieldInt("pid", Pid(marker_rank));
  w.FieldInt("tid", kActualTid);
  TimeFields(w, offset_ns);
  w.Key("args");
  w.BeginObject();
  w.Field("actual_ms", tl.step_time_s * 1e3);
  w.Field("ideal_ms", tl.ideal_step_time_s * 1e3);
  w.EndObject();
  sink.Commit();
}

// The critical-path waits of the actual replay. Emitted after all slices of
// the step: at equal ts the sorter keeps file order, so a flow never
// precedes the slice it binds to.
void CriticalPathFlows(EventSink& sink, const whatif::Timeline& tl,
                       int64_t offset_ns, int64_t* next_flow_id) {
  const auto n = static_cast<int64_t>(tl.ops.size());
  for (int64_t i = 0; i < n; ++i) {
    const whatif::TimelineOp& op = tl.ops[static_cast<size_t>(i)];
    if (!op.on_critical_path || op.waited_for < 0 || op.waited_for >= n ||
        op.waited_for == i) {
      continue;
    }
    const whatif::TimelineOp& from = tl.ops[static_cast<size_t>(op.waited_for)];
    const int64_t from_start = offset_ns + ToNs(from.start_s);
    const int64_t from_end = offset_ns + ToNs(from.end_s);
    const int64_t to_start = offset_ns + ToNs(op.start_s);
    const int64_t to_end = offset_ns + ToNs(op.end_s);
    const int64_t id = (*next_flow_id)++;
    FlowEvent(sink, true, id, from.rank,
              from_end - from_start >= 2 ? from_end - 1 : from_start);
    FlowEvent(sink, false, id, op.rank,
              to_end - to_start >= 2 ? to_start + 1 : to_start);
  }
}

// Emits one step whose time 0 is `offset_ns`; returns the end of its longer
// replay on the axis. `next_flow_id` keeps flow ids unique across steps.
int64_t EmitStep(EventSink& sink, const whatif::Timeline& tl, int64_t offset_ns,
                 int32_t marker_rank, int64_t* next_flow_id) {
  int64_t end_ns =
      offset_ns +
      std::max({ToNs(tl.step_time_s), ToNs(tl.ideal_step_time_s), int64_t{0}});
  if (!tl.ops.empty()) StepMarker(sink, tl, offset_ns, marker_rank);
  for (const whatif::TimelineOp& op : tl.ops) {
    const int64_t ideal_end = offset_ns + ToNs(op.ideal_end_s);
    const int64_t end = offset_ns + ToNs(op.end_s);
    Slice(sink, op, tl.step, kActualTid, offset_ns + ToNs(op.start_s), end);
    Slice(sink, op, tl.step, kIdealTid, offset_ns + ToNs(op.ideal_start_s),
          ideal_end);
    end_ns = std::max({end_ns, end, ideal_end});
  }
  CriticalPathFlows(sink, tl, offset_ns, next_flow_id);
  return end_ns;
}

}  // namespace

std::string RenderPerfettoTimelines(const std::vector<whatif::Timeline>& steps,
                                    std::string_view title) {
  // Ordered by rank: process order and output are deterministic.
  std::map<int32_t, Worker> workers;
  for (const whatif::Timeline& tl : steps) {
    for (const whatif::TimelineOp& op : tl.ops) {
      workers.try_emplace(op.rank, Worker{op.dp, op.pp});
    }
  }
  std::string out = "{\"traceEvents\": [";
  EventSink sink(&out);
  WorkerMetadata(sink,
                 steps.empty() ? whatif::Layout::kMegatron : steps[0].layout,
                 workers);
  const int32_t marker_rank = workers.empty() ? 0 : workers.begin()->first;
  int64_t offset_ns = 0;
  int64_t next_flow_id = 1;
  for (const whatif::Timeline& tl : steps) {
    const int64_t end_ns =
        EmitStep(sink, tl, offset_ns, marker_rank, &next_flow_id);
    const int64_t span_ns = end_ns - offset_ns;
    offset_ns = end_ns + std::max(kMinStepGapNs, span_ns / 10);
  }
  out += "\n],\n\"displayTimeUnit\": \"ms\",\n\"metadata\": ";
  JsonWriter meta(0);
  meta.BeginObject();
  meta.FieldString("title", title);
  meta.FieldString("generator", "strag");
  meta.FieldInt("workers", static_cast<int64_t>(workers.size()));
  meta.Key("steps");
  meta.BeginArray();
  for (const whatif::Timeline& tl : steps) meta.Int(tl.step);
  meta.EndArray();
  meta.EndObject();
  out += meta.str();
  out += "\n}\n";
  return out;
}

std::string RenderPerfettoJson(const Report& report) {
  return RenderPerfettoTimelines(report.timelines, report.source);
}

}  // namespace strag::report
