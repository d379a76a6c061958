// SPDX-License-Identifier: Apache-2.0
// Hand-built RankTraces for the generic model's tests (test-only header).

#ifndef STRAG_SRC_GRAPH_GENERIC_GENERIC_TEST_UTIL_H_
#define STRAG_SRC_GRAPH_GENERIC_GENERIC_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace/rank_trace.h"

namespace strag::graph::testing {

// Builds one rank's trace. Times are given in microseconds (doubles) on the
// "true" clock; the trace stores them in ns on the rank's own clock, which
// reads true time + skew_ns. A launch of -1 means unknown.
class TraceBuilder {
 public:
  TraceBuilder(int32_t rank, int64_t skew_ns = 0) : skew_ns_(skew_ns) {
    t_.rank = rank;
    t_.source = "rank" + std::to_string(rank) + ".json";
    t_.names.push_back("op");
  }

  int32_t Group(std::string name, std::vector<int32_t> ranks) {
    t_.groups.push_back({std::move(name), "", std::move(ranks)});
    return static_cast<int32_t>(t_.groups.size() - 1);
  }
  TraceBuilder& Step(int64_t id, double start_us, double end_us) {
    t_.steps.push_back({id, Ns(start_us), Ns(end_us)});
    return *this;
  }
  TraceBuilder& Kernel(int32_t stream, double start_us, double dur_us,
                       double launch_us = -1) {
    Row(stream, start_us, dur_us, launch_us, -1);
    return *this;
  }
  TraceBuilder& Comm(int32_t stream, trace::OpType kind, double start_us,
                     double dur_us, double launch_us = -1, int32_t group = -1,
                     int64_t seq = -1, int32_t peer = -1) {
    trace::CommOp op;
    op.kind = kind;
    op.group = group;
    op.seq = seq;
    op.peer = peer;
    t_.comms.push_back(op);
    Row(stream, start_us, dur_us, launch_us,
        static_cast<int32_t>(t_.comms.size() - 1));
    return *this;
  }
  trace::RankTrace Take() { return std::move(t_); }
  int64_t Ns(double us) const { return std::llround(us * 1000) + skew_ns_; }

 private:
  void Row(int32_t stream, double start_us, double dur_us, double launch_us,
           int32_t comm) {
    t_.start_ns.push_back(Ns(start_us));
    t_.dur_ns.push_back(std::llround(dur_us * 1000));
    t_.launch_ns.push_back(launch_us < 0 ? -1 : Ns(launch_us));
    t_.stream.push_back(stream);
    t_.comm.push_back(comm);
    t_.name.push_back(0);
  }

  int64_t skew_ns_;
  trace::RankTrace t_;
};

}  // namespace strag::graph::testing

#endif  // STRAG_SRC_GRAPH_GENERIC_GENERIC_TEST_UTIL_H_
