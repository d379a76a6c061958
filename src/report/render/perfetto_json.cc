// SPDX-License-Identifier: Apache-2.0
#include "report/render/perfetto_json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json_writer.h"
#include "trace/op_type.h"

namespace strag::report {
namespace {

// The tracks of a worker, in UI order. Compute and communication run at
// once on a GPU (different streams), so they get tracks of their own: the
// slices of one track never overlap, which Perfetto's importer requires of
// complete events on a thread track (it drops a partial overlap).
enum Group : int { kActualCompute, kActualComm, kIdealCompute, kIdealComm };
constexpr int kGroups = 4;
constexpr std::array<std::string_view, kGroups> kGroupNames = {
    "actual compute", "actual comm", "ideal compute", "ideal comm"};

// The end of the axis: far below int64 ns (Perfetto's unit), with room for
// the importer's ts * 1000 in double. Anything later is clipped to it.
constexpr int64_t kMaxAxisNs = 9'000'000'000'000'000'000;
// Smallest gap between two steps, so that even empty steps stay apart.
constexpr int64_t kMinStepGapNs = 1000;

// Seconds to whole nanoseconds, clipped to [-kMaxAxisNs, kMaxAxisNs]:
// Perfetto keeps ns, and integer ns make the slice ends of neighbouring ops
// coincide exactly instead of overlapping by a rounding error.
int64_t ToNs(double seconds) {
  if (std::isnan(seconds)) return 0;
  const double ns = seconds * 1e9;
  if (ns >= static_cast<double>(kMaxAxisNs)) return kMaxAxisNs;
  if (ns <= -static_cast<double>(kMaxAxisNs)) return -kMaxAxisNs;
  return std::llround(ns);
}

// `offset_ns` + `ns` on the axis, both clipped to [0, kMaxAxisNs] first:
// never overflows.
int64_t AxisAdd(int64_t offset_ns, int64_t ns) {
  offset_ns = std::clamp<int64_t>(offset_ns, 0, kMaxAxisNs);
  ns = std::clamp<int64_t>(ns, 0, kMaxAxisNs);
  return ns > kMaxAxisNs - offset_ns ? kMaxAxisNs : offset_ns + ns;
}

int64_t Pid(int32_t rank) { return static_cast<int64_t>(rank) + 1; }

struct Span {
  int64_t start = 0, end = 0;  // on the axis, end >= start
};

// One step on the axis: the span and the lane (track of its group) of every
// op, actual and ideal.
struct StepLayout {
  int64_t offset_ns = 0;
  int64_t end_ns = 0;                        // of the longer replay
  std::array<std::vector<Span>, 2> spans;    // [0] actual, [1] ideal
  std::array<std::vector<int32_t>, 2> lane;  // the same
};

Group GroupOf(const whatif::TimelineOp& op, int replay) {
  return static_cast<Group>(2 * replay + (op.comm ? 1 : 0));
}

// Lanes used per worker and group, the most over all steps.
using LaneCounts = std::map<int32_t, std::array<int32_t, kGroups>>;

// Puts every op of `order[lo, hi)` (one worker and group, sorted by start)
// in the lowest lane free at its start: interval partitioning, so that the
// slices of a lane never overlap and the fewest lanes are used. O(n log n).
int32_t AssignLanes(const std::vector<size_t>& order, size_t lo, size_t hi,
                    const std::vector<Span>& spans,
                    std::vector<int32_t>* lane) {
  using Busy = std::pair<int64_t, int32_t>;  // (end, lane)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> free;
  int32_t used = 0;
  for (size_t k = lo; k < hi; ++k) {
    const Span& s = spans[order[k]];
    while (!busy.empty() && busy.top().first <= s.start) {
      free.push(busy.top().second);
      busy.pop();
    }
    int32_t l = used;
    if (!free.empty()) {
      l = free.top();
      free.pop();
    } else {
      ++used;
    }
    (*lane)[order[k]] = l;
    busy.emplace(s.end, l);
  }
  return used;
}

// Lanes of one replay of a step: ops grouped by (worker, group), each
// group's lanes assigned in start order.
void LayOutReplay(const whatif::Timeline& tl, int replay, StepLayout* out,
                  LaneCounts* lanes) {
  const std::vector<Span>& spans = out->spans[static_cast<size_t>(replay)];
  std::vector<int32_t>& lane = out->lane[static_cast<size_t>(replay)];
  lane.assign(tl.ops.size(), 0);
  std::vector<size_t> order(tl.ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](size_t i) {
    const whatif::TimelineOp& op = tl.ops[i];
    return std::tuple(op.rank, GroupOf(op, replay), spans[i].start,
                      spans[i].end, i);
  };
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return key(a) < key(b); });
  for (size_t lo = 0; lo < order.size();) {
    const whatif::TimelineOp& first = tl.ops[order[lo]];
    const Group group = GroupOf(first, replay);
    size_t hi = lo;
    while (hi < order.size() && tl.ops[order[hi]].rank == first.rank &&
           GroupOf(tl.ops[order[hi]], replay) == group) {
      ++hi;
    }
    int32_t& count = (*lanes)[first.rank][static_cast<size_t>(group)];
    count = std::max(count, AssignLanes(order, lo, hi, spans, &lane));
    lo = hi;
  }
}

StepLayout LayOutStep(const whatif::Timeline& tl, int64_t offset_ns,
                      LaneCounts* lanes) {
  StepLayout out;
  out.offset_ns = offset_ns;
  out.end_ns = AxisAdd(
      offset_ns, std::max(ToNs(tl.step_time_s), ToNs(tl.ideal_step_time_s)));
  for (const whatif::TimelineOp& op : tl.ops) {
    const Span actual{AxisAdd(offset_ns, ToNs(op.start_s)),
                      AxisAdd(offset_ns, ToNs(op.end_s))};
    const Span ideal{AxisAdd(offset_ns, ToNs(op.ideal_start_s)),
                     AxisAdd(offset_ns, ToNs(op.ideal_end_s))};
    for (int r = 0; r < 2; ++r) {
      Span s = r == 0 ? actual : ideal;
      s.end = std::max(s.end, s.start);
      out.spans[static_cast<size_t>(r)].push_back(s);
      out.end_ns = std::max(out.end_ns, s.end);
    }
  }
  LayOutReplay(tl, 0, &out, lanes);
  LayOutReplay(tl, 1, &out, lanes);
  return out;
}

// The thread ids of each worker's tracks: lanes numbered from 1 in group
// order. tid(rank, group, lane) = first[rank][group] + lane.
class Tracks {
 public:
  explicit Tracks(const LaneCounts& lanes) {
    for (const auto& [rank, count] : lanes) {
      std::array<int64_t, kGroups>& first = first_[rank];
      int64_t next = 1;
      for (size_t g = 0; g < kGroups; ++g) {
        first[g] = next;
        next += count[g];
      }
    }
  }
  int64_t Tid(int32_t rank, Group group, int32_t lane) const {
    return first_.at(rank)[static_cast<size_t>(group)] + lane;
  }

 private:
  std::map<int32_t, std::array<int64_t, kGroups>> first_;
};

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

// Microseconds (the format's unit) of an axis time in ns.
double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

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

struct Worker {
  int32_t dp = 0, pp = 0;
};

void WorkerMetadata(EventSink& sink, whatif::Layout layout,
                    const std::map<int32_t, Worker>& workers,
                    const LaneCounts& lanes, const Tracks& tracks) {
  for (const auto& [rank, worker] : workers) {
    const int64_t pid = Pid(rank);
    const std::string name =
        whatif::WorkerLabel(layout, rank, worker.dp, worker.pp);
    Metadata(sink, "process_name", pid, -1, name, 0);
    // Lowest first in the UI: rank order.
    Metadata(sink, "process_sort_index", pid, -1, "", rank);
    const std::array<int32_t, kGroups>& count = lanes.at(rank);
    for (int g = 0; g < kGroups; ++g) {
      for (int32_t l = 0; l < count[static_cast<size_t>(g)]; ++l) {
        const int64_t tid = tracks.Tid(rank, static_cast<Group>(g), l);
        std::string track(kGroupNames[static_cast<size_t>(g)]);
        if (l > 0) {
          track += ' ';
          track += std::to_string(l + 1);
        }
        Metadata(sink, "thread_name", pid, tid, track, 0);
        Metadata(sink, "thread_sort_index", pid, tid, "", tid);
      }
    }
  }
}

std::string SliceName(const whatif::TimelineOp& op) {
  std::string name(trace::OpTypeName(op.type));
  if (op.microbatch >= 0) name += " #" + std::to_string(op.microbatch);
  return name;
}

// An event of a step, to be written in time order. At one ts: the step
// marker, then slices, then flow starts, then flow ends, each kind in the
// order made (Perfetto's sorter keeps the file order at one ts, and binds a
// flow event to the slice open on its track when it comes).
struct Pending {
  enum Kind : int { kMarker, kSlice, kFlowStart, kFlowEnd };
  int64_t ts_ns = 0;
  Kind kind = kMarker;
  size_t op = 0;   // kSlice: the op; flows: the op whose slice they bind to
  int replay = 0;  // kSlice: 0 actual, 1 ideal
  int64_t flow_id = 0;
};

// A ts inside `s` for a flow bound to it: Perfetto binds to the slice open
// at the flow's ts, and a slice is closed at its end. Near its end (an arrow
// leaving a finished op) or near its start. Slices under 2 ns get their
// start and may bind to a neighbour; they are below any trace's resolution.
int64_t InsideNearEnd(const Span& s) {
  return s.end - s.start >= 2 ? s.end - 1 : s.start;
}
int64_t InsideNearStart(const Span& s) {
  return s.end - s.start >= 2 ? s.start + 1 : s.start;
}

// The critical-path waits of the actual replay, as flows whose end never
// comes before their start. A wait for a dependency leaves the dependency's
// end; a wait at a rendezvous (the waited-for member overlaps the waiting op
// and started later) leaves where the late member arrived, its start. The
// arrow lands in the waiting op at the same time or after.
void CriticalPathFlows(const whatif::Timeline& tl, const StepLayout& layout,
                       int64_t* next_flow_id, std::vector<Pending>* out) {
  const std::vector<Span>& spans = layout.spans[0];
  const auto n = static_cast<int64_t>(tl.ops.size());
  for (int64_t i = 0; i < n; ++i) {
    const whatif::TimelineOp& op = tl.ops[static_cast<size_t>(i)];
    if (!op.on_critical_path || op.waited_for < 0 || op.waited_for >= n ||
        op.waited_for == i) {
      continue;
    }
    const auto from_op = static_cast<size_t>(op.waited_for);
    const Span& from = spans[from_op];
    const Span& to = spans[static_cast<size_t>(i)];
    const int64_t start =
        from.end <= to.start ? InsideNearEnd(from) : InsideNearStart(from);
    int64_t end = std::max(start, InsideNearStart(to));
    if (to.end - to.start >= 2) end = std::min(end, to.end - 1);
    if (end < start || end > to.end) continue;  // no consistent arrow
    const int64_t id = (*next_flow_id)++;
    out->push_back({start, Pending::kFlowStart, from_op, 0, id});
    out->push_back({end, Pending::kFlowEnd, static_cast<size_t>(i), 0, id});
  }
}

// Renders the events of one step: its time-ordered slices, flows and
// marker, against the tracks of `tracks`.
class StepWriter {
 public:
  StepWriter(EventSink& sink, const Tracks& tracks, int32_t marker_rank)
      : sink_(sink), tracks_(tracks), marker_rank_(marker_rank) {}

  void Write(const whatif::Timeline& tl, const StepLayout& layout,
             int64_t* next_flow_id) {
    std::vector<Pending> events;
    if (!tl.ops.empty()) {
      events.push_back({layout.offset_ns, Pending::kMarker, 0, 0, 0});
    }
    for (size_t i = 0; i < tl.ops.size(); ++i) {
      for (int r = 0; r < 2; ++r) {
        events.push_back({layout.spans[static_cast<size_t>(r)][i].start,
                          Pending::kSlice, i, r, 0});
      }
    }
    CriticalPathFlows(tl, layout, next_flow_id, &events);
    std::stable_sort(
        events.begin(), events.end(), [](const Pending& a, const Pending& b) {
          return std::pair(a.ts_ns, a.kind) < std::pair(b.ts_ns, b.kind);
        });
    for (const Pending& e : events) Emit(tl, layout, e);
  }

 private:
  int64_t Tid(const whatif::TimelineOp& op, const StepLayout& layout, size_t i,
              int replay) const {
    return tracks_.Tid(op.rank, GroupOf(op, replay),
                       layout.lane[static_cast<size_t>(replay)][i]);
  }

  void Emit(const whatif::Timeline& tl, const StepLayout& layout,
            const Pending& e) {
    if (e.kind == Pending::kMarker) return StepMarker(tl, e.ts_ns);
    const whatif::TimelineOp& op = tl.ops[e.op];
    const int64_t tid =
        Tid(op, layout, e.op, e.kind == Pending::kSlice ? e.replay : 0);
    if (e.kind == Pending::kSlice) {
      Slice(op, tl.step, tid,
            layout.spans[static_cast<size_t>(e.replay)][e.op]);
    } else {
      FlowEvent(e.kind == Pending::kFlowStart, e.flow_id, op.rank, tid,
                e.ts_ns);
    }
  }

  void Slice(const whatif::TimelineOp& op, int64_t step, int64_t tid,
             const Span& span) {
    JsonWriter& w = sink_.Begin();
    w.FieldString("ph", "X");
    w.FieldString("name", SliceName(op));
    w.FieldString("cat", op.comm ? "comm" : "compute");
    w.FieldInt("pid", Pid(op.rank));
    w.FieldInt("tid", tid);
    w.Field("ts", Us(span.start));
    w.Field("dur", Us(span.end - span.start));
    w.Key("args");
    w.BeginObject();
    w.FieldInt("step", step);
    w.FieldInt("microbatch", op.microbatch);
    w.FieldInt("seq_id", op.seq_id);
    w.Key("critical");
    w.Bool(op.on_critical_path);
    w.EndObject();
    sink_.Commit();
  }

  // One end of a v1 flow: "s" binds to the slice open on its track at its
  // ts, "f" with "bp":"e" to the enclosing slice.
  void FlowEvent(bool start, int64_t id, int32_t rank, int64_t tid,
                 int64_t ts_ns) {
    JsonWriter& w = sink_.Begin();
    w.FieldString("ph", start ? "s" : "f");
    if (!start) w.FieldString("bp", "e");
    w.FieldInt("id", id);
    w.FieldString("name", "waited for");
    w.FieldString("cat", "critical-path");
    w.FieldInt("pid", Pid(rank));
    w.FieldInt("tid", tid);
    w.Field("ts", Us(ts_ns));
    sink_.Commit();
  }

  // A global instant at the step's start, so the UI can jump between steps.
  void StepMarker(const whatif::Timeline& tl, int64_t ts_ns) {
    JsonWriter& w = sink_.Begin();
    w.FieldString("ph", "i");
    w.FieldString("s", "g");
    w.FieldString("name", "step " + std::to_string(tl.step));
    // A real worker's pid: no phantom process 0 in the process list.
    w.FieldInt("pid", Pid(marker_rank_));
    w.FieldInt("tid", 1);
    w.Field("ts", Us(ts_ns));
    w.Key("args");
    w.BeginObject();
    w.Field("actual_ms", tl.step_time_s * 1e3);
    w.Field("ideal_ms", tl.ideal_step_time_s * 1e3);
    w.EndObject();
    sink_.Commit();
  }

  EventSink& sink_;
  const Tracks& tracks_;
  int32_t marker_rank_;
};

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
  // The axis and the lanes first: the track list precedes the events.
  LaneCounts lanes;
  for (const auto& [rank, worker] : workers) lanes[rank] = {};
  std::vector<StepLayout> layouts;
  int64_t offset_ns = 0;
  for (const whatif::Timeline& tl : steps) {
    layouts.push_back(LayOutStep(tl, offset_ns, &lanes));
    const int64_t end_ns = layouts.back().end_ns;
    offset_ns =
        AxisAdd(end_ns, std::max(kMinStepGapNs, (end_ns - offset_ns) / 10));
  }
  const Tracks tracks(lanes);
  // displayTimeUnit first: Perfetto's importer warns when it comes late.
  std::string out = "{\"displayTimeUnit\": \"ms\",\n\"traceEvents\": [";
  EventSink sink(&out);
  WorkerMetadata(sink,
                 steps.empty() ? whatif::Layout::kMegatron : steps[0].layout,
                 workers, lanes, tracks);
  const int32_t marker_rank = workers.empty() ? 0 : workers.begin()->first;
  StepWriter writer(sink, tracks, marker_rank);
  int64_t next_flow_id = 1;
  for (size_t k = 0; k < steps.size(); ++k) {
    writer.Write(steps[k], layouts[k], &next_flow_id);
  }
  out += "\n],\n\"metadata\": ";
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
