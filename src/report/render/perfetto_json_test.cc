// SPDX-License-Identifier: Apache-2.0
// Structural test of the Perfetto export (issue 4 acceptance): valid JSON,
// every flow start has its end, timestamps in microseconds, one process per
// worker, steps laid out without overlap.

#include "report/render/perfetto_json.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
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
  std::string ph, name, cat, bp;
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

TEST(PerfettoJsonTest, OneProcessPerWorkerWithTwoThreads) {
  simdjson::dom::parser parser;
  const auto events =
      ParseEvents(RenderPerfettoTimelines({TwoWorkerStep(7)}, "t"), parser);
  std::set<int64_t> named, sliced;
  int threads = 0;
  for (const Event& e : OfPhase(events, "M")) {
    if (e.name == "process_name") named.insert(e.pid);
    if (e.name == "thread_name") ++threads;
  }
  for (const Event& e : OfPhase(events, "X")) sliced.insert(e.pid);
  EXPECT_EQ(named.size(), 2u);
  EXPECT_EQ(OfPhase(events, "M").size(), 2u * 6u);  // name+sort per track
  EXPECT_EQ(named, sliced);
  EXPECT_EQ(threads, 4);
  // Every op on both threads.
  EXPECT_EQ(OfPhase(events, "X").size(), 8u);
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
  for (const Event& e : events) {
    if (e.ph != "s" && e.ph != "f") continue;
    EXPECT_EQ(e.cat, "critical-path");
    EXPECT_EQ(e.tid, 1);  // the actual replay
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
      RenderPerfettoTimelines({TwoWorkerStep(1), TwoWorkerStep(2)}, "t"), parser);
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

TEST(PerfettoJsonTest, EmptyInputIsValid) {
  simdjson::dom::parser parser;
  EXPECT_TRUE(ParseEvents(RenderPerfettoTimelines({}, ""), parser).empty());
}

}  // namespace
}  // namespace strag::report
