// SPDX-License-Identifier: Apache-2.0
// Structural test of the Perfetto export (issues 4 and 11): valid JSON,
// every flow start has its end at or after it, timestamps in microseconds
// and in range, one process per worker, compute and communication on tracks
// of their own with no partial overlap, events in time order, steps laid out
// without overlap.

#include "report/render/perfetto_json.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace strag::report {
namespace {

using whatif::Timeline;
using whatif::TimelineOp;

// The fields of one trace event the checks use; absent ones keep defaults.
struct Event {
  std::string ph, name, cat, bp, arg_name;
  int64_t pid = -1, tid = -1, id = -1, step = -1;
  double ts = -1, dur = -1;
};

TimelineOp Op(int32_t rank, trace::OpType type, int32_t seq_id, int32_t mb,
              double start_s, double end_s, int64_t waited_for, bool critical) {
  TimelineOp op;
  op.rank = rank;
  op.dp = rank;  // two DP replicas of one stage
  op.pp = 0;
  op.type = type;
  op.seq_id = seq_id;
  op.microbatch = mb;
  op.comm = !trace::IsCompute(type);
  op.start_s = start_s;
  op.end_s = end_s;
  op.ideal_start_s = start_s;
  op.ideal_end_s = std::min(end_s, 0.006);
  op.waited_for = waited_for;
  op.on_critical_path = critical;
  return op;
}

// Two workers, one step. Rank 1 computes late, so rank 0's reduce-scatter
// waits for rank 1's (a cross-worker wait); rank 1's waits for its own
// forward. Critical path: op 2 -> op 3 -> op 1.
Timeline TwoWorkerStep(int64_t step) {
  using trace::OpType;
  Timeline tl;
  tl.step = step;
  tl.step_time_s = 0.007;
  tl.ideal_step_time_s = 0.006;
  tl.ops = {
      Op(0, OpType::kForwardCompute, 3, 0, 0.0015, 0.0035, -1, false),
      Op(0, OpType::kGradsReduceScatter, 4, -1, 0.006, 0.007, 3, true),
      Op(1, OpType::kForwardCompute, 3, 0, 0.0, 0.006, -1, true),
      Op(1, OpType::kGradsReduceScatter, 4, -1, 0.006, 0.007, 2, true),
  };
  return tl;
}

using Field = simdjson::simdjson_result<simdjson::dom::element>;

std::string StrOr(Field f) {
  std::string_view v;
  return f.get_string().get(v) == simdjson::SUCCESS ? std::string(v) : "";
}
int64_t IntOr(Field f) {
  int64_t v = 0;
  return f.get_int64().get(v) == simdjson::SUCCESS ? v : -1;
}
double DoubleOr(Field f) {
  double v = 0;
  return f.get_double().get(v) == simdjson::SUCCESS ? v : -1;
}

// Parses `json`; fails the test on invalid JSON or a missing traceEvents.
std::vector<Event> ParseEvents(const std::string& json,
                               simdjson::dom::parser& parser) {
  std::vector<Event> events;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::array array;
  EXPECT_EQ(doc["traceEvents"].get_array().get(array), simdjson::SUCCESS);
  std::string_view unit;
  EXPECT_EQ(doc["displayTimeUnit"].get_string().get(unit), simdjson::SUCCESS);
  EXPECT_EQ(unit, "ms");
  for (simdjson::dom::element e : array) {
    Event ev;
    ev.ph = StrOr(e["ph"]);
    ev.name = StrOr(e["name"]);
    ev.cat = StrOr(e["cat"]);
    ev.bp = StrOr(e["bp"]);
    ev.pid = IntOr(e["pid"]);
    ev.tid = IntOr(e["tid"]);
    ev.id = IntOr(e["id"]);
    ev.ts = DoubleOr(e["ts"]);
    ev.dur = DoubleOr(e["dur"]);
    ev.step = IntOr(e["args"]["step"]);
    ev.arg_name = StrOr(e["args"]["name"]);
    events.push_back(ev);
  }
  return events;
}

std::vector<Event> OfPhase(const std::vector<Event>& events,
                           std::string_view ph) {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.ph == ph) out.push_back(e);
  }
  return out;
}

// (pid, tid) -> the track's name.
std::map<std::pair<int64_t, int64_t>, std::string> TrackNames(
    const std::vector<Event>& events) {
  std::map<std::pair<int64_t, int64_t>, std::string> out;
  for (const Event& e : events) {
    if (e.ph == "M" && e.name == "thread_name")
      out[{e.pid, e.tid}] = e.arg_name;
  }
  return out;
}

TEST(PerfettoJsonTest, OneProcessPerWorkerWithComputeAndCommTracks) {
  simdjson::dom::parser parser;
  const auto events =
      ParseEvents(RenderPerfettoTimelines({TwoWorkerStep(7)}, "t"), parser);
  std::set<int64_t> named, sliced;
  for (const Event& e : OfPhase(events, "M")) {
    if (e.name == "process_name") named.insert(e.pid);
  }
  for (const Event& e : OfPhase(events, "X")) sliced.insert(e.pid);
  EXPECT_EQ(named.size(), 2u);
  // Per worker: process name + sort, and name + sort of its 4 tracks.
  EXPECT_EQ(OfPhase(events, "M").size(), 2u * (2u + 4u * 2u));
  EXPECT_EQ(named, sliced);
  const auto tracks = TrackNames(events);
  EXPECT_EQ(tracks.size(), 8u);
  // Every op on both replays, each on the track of its kind.
  EXPECT_EQ(OfPhase(events, "X").size(), 8u);
  for (const Event& e : OfPhase(events, "X")) {
    const std::string& track = tracks.at({e.pid, e.tid});
    EXPECT_TRUE(track.ends_with(e.cat)) << track << " " << e.cat;
  }
  EXPECT_EQ(tracks.at({1, 1}), "actual compute");
  EXPECT_EQ(tracks.at({1, 2}), "actual comm");
  EXPECT_EQ(tracks.at({1, 3}), "ideal compute");
  EXPECT_EQ(tracks.at({1, 4}), "ideal comm");
}

TEST(PerfettoJsonTest, TimestampsAreMicroseconds) {
  simdjson::dom::parser parser;
  const auto events =
      ParseEvents(RenderPerfettoTimelines({TwoWorkerStep(7)}, "t"), parser);
  int found = 0;
  for (const Event& e : OfPhase(events, "X")) {
    EXPECT_GE(e.ts, 0.0);
    EXPECT_GE(e.dur, 0.0);
    EXPECT_LE(e.ts + e.dur, 7000.0);  // the step lasts 7 ms
    EXPECT_EQ(e.step, 7);
    if (e.pid == 1 && e.name == "forward-compute #0") {
      ++found;
      EXPECT_EQ(e.ts, 1500.0);
      EXPECT_EQ(e.dur, 2000.0);
      EXPECT_EQ(e.cat, "compute");
    }
    if (e.name == "grads-reduce-scatter") {
      EXPECT_EQ(e.cat, "comm");
    }
  }
  EXPECT_EQ(found, 2);  // actual and ideal
}

TEST(PerfettoJsonTest, EveryFlowStartHasOneEndInsideItsSlices) {
  simdjson::dom::parser parser;
  const auto events =
      ParseEvents(RenderPerfettoTimelines({TwoWorkerStep(7)}, "t"), parser);
  std::map<int64_t, int> starts, ends;
  const auto slices = OfPhase(events, "X");
  const auto tracks = TrackNames(events);
  for (const Event& e : events) {
    if (e.ph != "s" && e.ph != "f") continue;
    EXPECT_EQ(e.cat, "critical-path");
    EXPECT_TRUE(tracks.at({e.pid, e.tid}).starts_with("actual"));
    ++(e.ph == "s" ? starts : ends)[e.id];
    EXPECT_EQ(e.bp, e.ph == "f" ? "e" : "");
    // Bound to a slice: its ts lies strictly inside one on the same track.
    const bool inside =
        std::any_of(slices.begin(), slices.end(), [&](const Event& x) {
          return x.pid == e.pid && x.tid == e.tid && x.ts < e.ts &&
                 e.ts < x.ts + x.dur;
        });
    EXPECT_TRUE(inside) << e.ph << " " << e.id << " at " << e.ts;
  }
  EXPECT_EQ(starts.size(), 2u);  // op 1 waits for op 3, op 3 for op 2
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(ends[id], 1) << id;
  }
  for (const auto& [id, n] : ends) EXPECT_EQ(starts[id], 1) << id;
  // The cross-worker wait: a start on rank 1 (pid 2) ending on rank 0.
  bool cross = false;
  for (const Event& s : OfPhase(events, "s")) {
    for (const Event& f : OfPhase(events, "f")) {
      cross |= s.id == f.id && s.pid == 2 && f.pid == 1;
    }
  }
  EXPECT_TRUE(cross);
}

TEST(PerfettoJsonTest, StepsDoNotOverlapAndFlowIdsStayUnique) {
  simdjson::dom::parser parser;
  const auto events = ParseEvents(
      RenderPerfettoTimelines({TwoWorkerStep(1), TwoWorkerStep(2)}, "t"),
      parser);
  std::map<int64_t, std::pair<double, double>> span;  // step -> [min, max]
  for (const Event& e : OfPhase(events, "X")) {
    auto [it, fresh] = span.try_emplace(e.step, e.ts, e.ts + e.dur);
    it->second.first = std::min(it->second.first, e.ts);
    it->second.second = std::max(it->second.second, e.ts + e.dur);
  }
  ASSERT_EQ(span.size(), 2u);
  EXPECT_GT(span[2].first, span[1].second);
  EXPECT_EQ(span[2].first - span[1].first, 7700.0);  // 7 ms + a tenth gap
  std::set<int64_t> ids;
  for (const Event& e : OfPhase(events, "s")) ids.insert(e.id);
  EXPECT_EQ(ids.size(), 4u);
}

TEST(PerfettoJsonTest, DeterministicAndEscapesTitle) {
  const std::vector<Timeline> steps = {TwoWorkerStep(1), TwoWorkerStep(2)};
  const std::string title = "job \"x\"\n";
  const std::string json = RenderPerfettoTimelines(steps, title);
  EXPECT_EQ(json, RenderPerfettoTimelines(steps, title));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  std::string_view got;
  ASSERT_EQ(doc["metadata"]["title"].get_string().get(got), simdjson::SUCCESS);
  EXPECT_EQ(got, title);
}

// A DDP-like step: rank 0 reaches the reduce-scatter early and waits at
// the rendezvous for the slow rank 1; both reduce-scatters overlap a
// compute op, and rank 0 runs two overlapping comm ops.
Timeline RendezvousStep() {
  using trace::OpType;
  Timeline tl;
  tl.step = 3;
  tl.step_time_s = 0.010;
  tl.ideal_step_time_s = 0.008;
  tl.ops = {
      Op(0, OpType::kForwardCompute, 1, 0, 0.0, 0.004, -1, false),
      Op(0, OpType::kGradsReduceScatter, 2, -1, 0.004, 0.009, 5, true),
      Op(0, OpType::kParamsAllGather, 3, -1, 0.005, 0.0095, 1, false),
      Op(0, OpType::kBackwardCompute, 4, 0, 0.0045, 0.010, 0, true),
      Op(1, OpType::kForwardCompute, 1, 0, 0.0, 0.007, -1, true),
      Op(1, OpType::kGradsReduceScatter, 2, -1, 0.007, 0.009, 4, true),
  };
  return tl;
}

// Perfetto's rules for complete events on a thread track: in (ts, longer
// first) order, a slice starting inside another ends inside it.
void ExpectProperNesting(const std::vector<Event>& events) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>>
      by_track;
  for (const Event& e : OfPhase(events, "X")) {
    by_track[{e.pid, e.tid}].emplace_back(e.ts, -e.dur);
  }
  for (auto& [track, slices] : by_track) {
    std::sort(slices.begin(), slices.end());
    std::vector<double> open_ends;
    for (const auto& [ts, neg_dur] : slices) {
      const double end = ts - neg_dur;
      while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
      if (!open_ends.empty()) {
        EXPECT_LE(end, open_ends.back())
            << "partial overlap on pid " << track.first << " tid "
            << track.second << " at " << ts;
      }
      open_ends.push_back(end);
    }
  }
}

TEST(PerfettoJsonTest, NoPartialOverlapOnAnyTrack) {
  simdjson::dom::parser parser;
  const auto events = ParseEvents(
      RenderPerfettoTimelines({RendezvousStep(), TwoWorkerStep(4)}, "t"),
      parser);
  ExpectProperNesting(events);
  // Rank 0's two overlapping comm ops need two comm tracks per replay.
  std::set<std::string> rank0;
  for (const auto& [track, name] : TrackNames(events)) {
    if (track.first == 1) rank0.insert(name);
  }
  EXPECT_EQ(rank0, (std::set<std::string>{"actual compute", "actual comm",
                                          "actual comm 2", "ideal compute",
                                          "ideal comm", "ideal comm 2"}));
}

TEST(PerfettoJsonTest, FlowsEndAtOrAfterTheirStartInTheBoundSlices) {
  simdjson::dom::parser parser;
  const Timeline tl = RendezvousStep();
  const auto events = ParseEvents(RenderPerfettoTimelines({tl}, "t"), parser);
  std::map<int64_t, Event> starts, ends;
  for (const Event& e : OfPhase(events, "s")) starts[e.id] = e;
  for (const Event& e : OfPhase(events, "f")) ends[e.id] = e;
  // Critical: op 1 waits for op 5 (rendezvous), op 3 for op 0, op 5 for 4.
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(ends.size(), 3u);
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(ends.count(id)) << id;
    EXPECT_GE(ends[id].ts, s.ts) << id;
  }
  // The rendezvous arrow leaves rank 1's reduce-scatter where it arrived
  // (7 ms) and lands in rank 0's, which had waited since 4 ms.
  const Event& rendezvous = starts.begin()->second;
  EXPECT_EQ(rendezvous.pid, 2);
  EXPECT_NEAR(rendezvous.ts, 7000.001, 1e-6);
  EXPECT_EQ(ends.begin()->second.pid, 1);
  EXPECT_NEAR(ends.begin()->second.ts, 7000.001, 1e-6);
  // Every flow event lies inside a slice of its own track.
  for (const Event& e : events) {
    if (e.ph != "s" && e.ph != "f") continue;
    bool inside = false;
    for (const Event& x : OfPhase(events, "X")) {
      inside |= x.pid == e.pid && x.tid == e.tid && x.ts < e.ts &&
                e.ts < x.ts + x.dur;
    }
    EXPECT_TRUE(inside) << e.ph << " " << e.id;
  }
}

TEST(PerfettoJsonTest, EventsAreInTimeOrder) {
  simdjson::dom::parser parser;
  const auto events = ParseEvents(
      RenderPerfettoTimelines({RendezvousStep(), TwoWorkerStep(4)}, "t"),
      parser);
  double last = -1;
  for (const Event& e : events) {
    if (e.ph == "M") continue;
    EXPECT_GE(e.ts, last) << e.ph << " " << e.name;
    last = e.ts;
  }
}

TEST(PerfettoJsonTest, HugeAndNonFiniteTimesStayInRange) {
  // A duration at the documented limit (9.2e9 s), twice, and junk.
  Timeline tl = TwoWorkerStep(1);
  tl.step_time_s = 9.2e9;
  tl.ops[0].end_s = 9.2e9;
  tl.ops[0].ideal_end_s = std::numeric_limits<double>::infinity();
  tl.ops[2].start_s = std::numeric_limits<double>::quiet_NaN();
  tl.ops[3].ideal_start_s = -1e300;
  simdjson::dom::parser parser;
  const auto events = ParseEvents(
      RenderPerfettoTimelines({tl, tl, TwoWorkerStep(2)}, "t"), parser);
  ASSERT_FALSE(events.empty());
  // ts and ts + dur within int64 ns, as Perfetto reads them (us * 1000).
  const double max_us = 9.2233720368547e15;
  for (const Event& e : events) {
    if (e.ph == "M") continue;
    EXPECT_GE(e.ts, 0.0);
    EXPECT_LT(e.ts, max_us);
    if (e.ph == "X") {
      EXPECT_GE(e.dur, 0.0);
      EXPECT_LT(e.ts + e.dur, max_us);
    }
  }
  ExpectProperNesting(events);
}

TEST(PerfettoJsonTest, EmptyInputIsValid) {
  simdjson::dom::parser parser;
  EXPECT_TRUE(ParseEvents(RenderPerfettoTimelines({}, ""), parser).empty());
}

}  // namespace
}  // namespace strag::report
