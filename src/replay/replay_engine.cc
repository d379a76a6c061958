// SPDX-License-Identifier: Apache-2.0
#include "replay/replay_engine.h"

#include <algorithm>
#include <limits>

#include "base/check.h"
#include "base/cpu_features.h"

namespace strag::replay {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Windows of whole sync domains with about this many lanes: the window's
// rows of start / end (nodes x lanes x 16 bytes) stay in the L2 cache.
constexpr size_t kWindowLanes = 64;

// One window: lanes [lo, lo + lanes) = sync domains [first, end). Times of
// (node v, window lane l) live at start[v * stride + l] / end[...].
struct Window {
  size_t lo = 0, lanes = 0;
  size_t first_domain = 0, end_domain = 0;
  double* start = nullptr;
  double* end = nullptr;
  size_t stride = 0;
};

class WindowReplay {
 public:
  WindowReplay(const ReplayInput& in, ReplayWorkspace* ws, const Window& w)
      : in_(in), ws_(ws), w_(w) {
    const size_t n = in.graph->num_nodes();
    ws_->rows.resize(n);
    for (size_t v = 0; v < n; ++v) {
      ws_->rows[v] = in.cost.rows[v] ? in.cost.rows[v] + w.lo : nullptr;
    }
  }

  void Run() {
    const auto& groups = in_.graph->groups();
    for (const graph::ScheduleUnit& unit : in_.graph->schedule()) {
      if (unit.is_group) {
        RunGroup(groups[unit.id]);
        continue;
      }
      const graph::NodeId v = unit.id;
      Start(v);
      End(v, w_.start + v * w_.stride);
    }
  }

 private:
  // end[v] = from[lane] + cost of v on the lane.
  void End(graph::NodeId v, const double* from) {
    double* end = w_.end + v * w_.stride;
    if (const double* cost = ws_->rows[v]) {
      for (size_t l = 0; l < w_.lanes; ++l) end[l] = from[l] + cost[l];
    } else {
      const double c = in_.cost.values[v];
      for (size_t l = 0; l < w_.lanes; ++l) end[l] = from[l] + c;
    }
  }

  // start[v] = max(end of deps) (or root_start) + launch delay.
  void Start(graph::NodeId v) {
    double* start = w_.start + v * w_.stride;
    const uint32_t* dep = in_.graph->dep_begin(v);
    const uint32_t* dep_end = in_.graph->dep_end(v);
    if (dep == dep_end) {
      std::fill(start, start + w_.lanes, in_.root_start);
    } else {
      const double* first = w_.end + size_t{*dep} * w_.stride;
      std::copy(first, first + w_.lanes, start);
      for (++dep; dep != dep_end; ++dep) {
        const double* e = w_.end + size_t{*dep} * w_.stride;
        for (size_t l = 0; l < w_.lanes; ++l)
          start[l] = std::max(start[l], e[l]);
      }
    }
    if (!in_.launch_delay.empty()) {
      const float* ld = in_.launch_delay.data() + v * in_.num_lanes + w_.lo;
      for (size_t l = 0; l < w_.lanes; ++l)
        start[l] += static_cast<double>(ld[l]);
    }
  }

  // The time a dp_sync group completes over one sync domain: the latest
  // start, or with a quorum the quorum-th earliest.
  double Rendezvous(const double* begin, const double* end) {
    const auto size = static_cast<size_t>(end - begin);
    if (in_.dp_quorum == 0 || in_.dp_quorum >= size) {
      return *std::max_element(begin, end);
    }
    quorum_.assign(begin, end);
    const auto k = quorum_.begin() + (in_.dp_quorum - 1);
    std::nth_element(quorum_.begin(), k, quorum_.end());
    return *k;
  }

  void RunGroup(const graph::CommGroup& group) {
    double* gs = ws_->rendezvous.data();
    std::fill(gs, gs + w_.lanes, -kInf);
    for (graph::NodeId m : group.members) {
      Start(m);
      const double* start = w_.start + m * w_.stride;
      for (size_t l = 0; l < w_.lanes; ++l) gs[l] = std::max(gs[l], start[l]);
    }
    if (group.dp_sync) {
      for (size_t k = w_.first_domain; k < w_.end_domain; ++k) {
        const size_t lo = in_.sync_offsets[k] - w_.lo;
        const size_t hi = in_.sync_offsets[k + 1] - w_.lo;
        std::fill(gs + lo, gs + hi, Rendezvous(gs + lo, gs + hi));
      }
    }
    for (graph::NodeId m : group.members) End(m, gs);
  }

  const ReplayInput& in_;
  ReplayWorkspace* ws_;
  const Window& w_;
  std::vector<double> quorum_;
};

// Step times of the window's domains, from its start / end rows.
void WindowStepTimes(const ReplayInput& in, const Window& w,
                     ReplayWorkspace* ws, StepTimes* out) {
  const size_t n = in.graph->num_nodes();
  double* lane_min = ws->rendezvous.data();
  std::fill(lane_min, lane_min + w.lanes, kInf);
  ws->lane_max.Resize(std::max(ws->lane_max.size(), w.lanes));
  ws->lane_opt.Resize(std::max(ws->lane_opt.size(), w.lanes));
  double* lane_max = ws->lane_max.data();
  double* lane_opt = ws->lane_opt.data();
  std::fill(lane_max, lane_max + w.lanes, -kInf);
  std::fill(lane_opt, lane_opt + w.lanes, -kInf);
  for (size_t v = 0; v < n; ++v) {
    const double* s = w.start + v * w.stride;
    const double* e = w.end + v * w.stride;
    for (size_t l = 0; l < w.lanes; ++l) {
      lane_min[l] = std::min(lane_min[l], s[l]);
      lane_max[l] = std::max(lane_max[l], e[l]);
    }
  }
  for (graph::NodeId v : in.optimizer_nodes) {
    const double* e = w.end + v * w.stride;
    for (size_t l = 0; l < w.lanes; ++l)
      lane_opt[l] = std::max(lane_opt[l], e[l]);
  }
  for (size_t k = w.first_domain; k < w.end_domain; ++k) {
    double lo = kInf, hi = -kInf, opt = -kInf;
    for (size_t l = in.sync_offsets[k] - w.lo;
         l < in.sync_offsets[k + 1] - w.lo; ++l) {
      lo = std::min(lo, lane_min[l]);
      hi = std::max(hi, lane_max[l]);
      opt = std::max(opt, lane_opt[l]);
    }
    out->span[k] = hi - lo;
    out->opt[k] = opt - in.root_start;
  }
}

// One window replayed and its step times: the whole inner loop of Replay,
// also compiled for AVX2 (base/cpu_features.h: only adds and maxima of
// doubles, so the same bits; 2.2x faster replays on trace-AR x16).
void RunWindow(const ReplayInput& in, ReplayWorkspace* ws, const Window& w,
               StepTimes* out) {
  WindowReplay(in, ws, w).Run();
  WindowStepTimes(in, w, ws, out);
}

#if STRAG_AVX2_CLONES
STRAG_AVX2_FLATTEN void RunWindowAvx2(const ReplayInput& in,
                                      ReplayWorkspace* ws, const Window& w,
                                      StepTimes* out) {
  RunWindow(in, ws, w, out);
}
#endif

using WindowRunner = void (*)(const ReplayInput&, ReplayWorkspace*,
                              const Window&, StepTimes*);

WindowRunner ChooseWindowRunner(Kernels kernels) {
#if STRAG_AVX2_CLONES
  if (kernels == Kernels::kWidest && CpuHasAvx2()) return &RunWindowAvx2;
#endif
  (void)kernels;
  return &RunWindow;
}

}  // namespace

StepTimes Replay(const ReplayInput& in, ReplayWorkspace* ws, ReplayTimes* keep,
                 const WindowVisitor& visit) {
  const size_t n = in.graph->num_nodes();
  STRAG_CHECK(in.cost.rows.size() == n && in.cost.values.size() == n,
              "one cost row and value per node");
  STRAG_CHECK(
      in.launch_delay.empty() || in.launch_delay.size() == n * in.num_lanes,
      "launch delays: none, or one per (node, lane)");
  STRAG_CHECK(
      !in.sync_offsets.empty() && in.sync_offsets.back() == in.num_lanes,
      "sync offsets end at the number of lanes");
  const size_t domains = in.sync_offsets.size() - 1;
  StepTimes out;
  out.span.resize(domains);
  out.opt.resize(domains);
  if (keep) {
    keep->start.Resize(n * in.num_lanes);
    keep->end.Resize(n * in.num_lanes);
  }
  const WindowRunner run_window = ChooseWindowRunner(in.kernels);
  for (size_t k = 0; k < domains;) {
    Window w;
    w.lo = in.sync_offsets[k];
    w.first_domain = w.end_domain = k;
    while (w.end_domain < domains &&
           (w.end_domain == k ||
            in.sync_offsets[w.end_domain + 1] - w.lo <= kWindowLanes)) {
      ++w.end_domain;
    }
    w.lanes = in.sync_offsets[w.end_domain] - w.lo;
    ws->rendezvous.Resize(std::max(ws->rendezvous.size(), w.lanes));
    if (keep) {
      w.start = keep->start.data() + w.lo;
      w.end = keep->end.data() + w.lo;
      w.stride = in.num_lanes;
    } else {
      ws->start.Resize(std::max(ws->start.size(), n * w.lanes));
      ws->end.Resize(std::max(ws->end.size(), n * w.lanes));
      w.start = ws->start.data();
      w.end = ws->end.data();
      w.stride = w.lanes;
    }
    run_window(in, ws, w, &out);
    if (visit) visit(WindowTimes{w.lo, w.lanes, w.stride, w.start, w.end});
    k = w.end_domain;
  }
  return out;
}

std::vector<const double*> DenseRows(std::span<const double> cost,
                                     size_t num_nodes, size_t num_lanes) {
  std::vector<const double*> rows(num_nodes);
  for (size_t v = 0; v < num_nodes; ++v) rows[v] = cost.data() + v * num_lanes;
  return rows;
}

}  // namespace strag::replay
