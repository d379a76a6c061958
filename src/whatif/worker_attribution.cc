// SPDX-License-Identifier: Apache-2.0
#include "whatif/worker_attribution.h"

#include <algorithm>
#include <string>

#include "base/f32.h"
#include "base/parallel_for.h"
#include "replay/replay_engine.h"
#include "whatif/scenario_runner.h"

namespace strag::whatif {
namespace {

using graph::NodeId;

// Why batches of replays and not a sparse propagation (wait-states §4.5):
// the base of every scenario is the ideal step, in which all DP replicas
// are identical and, with pooled costs, most rendezvous are ties. Un-fixing
// a worker changes every one of its ops (traced costs scatter around the
// pooled value), a tie passes every increase on, and 1F1B couples all
// stages of the replica, so the set of (op, lane) times that differ from the
// ideal step ("the cone") is most of the replica's lane from the worker's
// first slow op on, plus the other replicas after the DP collectives
// (`measure_cone`: 47% of the replayed (op, lane) times on the llama-16k
// preset, 44-52% on the published traces). A sparse map entry costs tens
// of ns, a vectorised lane of the replay engine about one, so at equal
// exactness the dense replay of only the lanes that can differ is the
// cheaper way here.
//
// Lanes: un-fixing worker (d, p) in step s changes replica d of that step
// (lane A: stage p's ops traced, the rest ideal) and, through the dp_sync
// groups, the other replicas, which stay identical to each other (lane B:
// all ideal, folded as ScenarioRunner folds them; absent when dp == 1).
// Each (worker, step) is one sync domain of these 1-2 lanes, so one Replay
// call evaluates many workers side by side without them interacting.
//
// Exactness: each lane sees the same graph, the same cost doubles and the
// same sync-domain members as the lane ScenarioRunner::Run(Base::kIdeal,
// SelectWorkers(trace, {w})) replays for that instance (its lane of
// instance (s, d) and its folded lane), and the engine computes every time
// as a max (exact, order-free) plus one addition of that cost; the span is
// max - min (exact). So every per-step span is bit-identical, and the mean
// is the same pairwise sum over the same values in step order. Batching and
// windowing cannot matter: sync domains never interact.

// Lanes per batch: enough for the engine's 64-lane windows to fill, small
// enough that the mixed cost rows (stage nodes x lanes) stay in cache-sized
// pieces per thread.
constexpr size_t kBatchLanes = 256;

// One Replay call: the workers of stage `stage` (every DP rank) in steps
// [first_step, end_step).
struct Batch {
  int32_t stage = 0;
  size_t first_step = 0, end_step = 0;
};

// Per thread: reused across batches (no allocation once warm).
struct Scratch {
  replay::ReplayWorkspace workspace;
  std::vector<double> cost;  // [stage node k * lanes + lane]
  std::vector<const double*> rows;
  std::vector<uint32_t> sync;
};

// The ideal step's times per node (one lane): the base the cone is
// measured against.
struct IdealTimes {
  std::vector<double> start, end;
};

class Attribution {
 public:
  Attribution(const PreparedTrace& t, std::span<const double> traced,
              std::span<const double> ideal)
      : t_(t), traced_(traced), ideal_(ideal) {
    const size_t pp = static_cast<size_t>(t.pp);
    stage_nodes_.resize(pp);
    for (NodeId v = 0; v < t.num_nodes(); ++v) {
      stage_nodes_[static_cast<size_t>(t.model.keys[v].stage)].push_back(v);
    }
    worker_of_.assign(static_cast<size_t>(t.dp) * pp, -1);
    for (size_t k = 0; k < t.workers.size(); ++k) {
      const Worker& w = t.workers[k];
      worker_of_[static_cast<size_t>(w.dp) * pp + static_cast<size_t>(w.pp)] =
          static_cast<int64_t>(k);
    }
    lanes_per_domain_ = t.dp > 1 ? 2 : 1;
  }

  std::vector<Batch> Batches() const {
    const size_t lanes_per_step =
        static_cast<size_t>(t_.dp) * lanes_per_domain_;
    const size_t steps_per_batch =
        std::max<size_t>(1, kBatchLanes / lanes_per_step);
    std::vector<Batch> out;
    for (int32_t p = 0; p < t_.pp; ++p) {
      for (size_t s = 0; s < t_.steps.size(); s += steps_per_batch) {
        out.push_back(
            Batch{p, s, std::min(t_.steps.size(), s + steps_per_batch)});
      }
    }
    return out;
  }

  // Replays `b`; writes its step times into `out` and returns the number of
  // (op, lane) times off the ideal step when `ideal` is given.
  uint64_t Run(const Batch& b, const IdealTimes* ideal, Scratch* scratch,
               WorkerUnfix* out) const {
    const size_t dp = static_cast<size_t>(t_.dp);
    const size_t domains = (b.end_step - b.first_step) * dp;
    const size_t lanes = domains * lanes_per_domain_;
    FillCosts(b, lanes, scratch);
    scratch->sync.resize(domains + 1);
    for (size_t k = 0; k <= domains; ++k) {
      scratch->sync[k] = static_cast<uint32_t>(k * lanes_per_domain_);
    }
    const replay::ReplayInput input{
        .graph = &t_.model.graph,
        .num_lanes = lanes,
        .cost = {.rows = scratch->rows, .values = ideal_},
        .launch_delay = {},
        .sync_offsets = scratch->sync,
        .optimizer_nodes = t_.model.optimizer_nodes,
    };
    uint64_t changed = 0;
    replay::WindowVisitor count;
    if (ideal) {
      count = [&](const replay::WindowTimes& w) {
        changed += CountChanged(w, *ideal);
      };
    }
    Store(b, replay::Replay(input, &scratch->workspace, nullptr, count), out);
    return changed;
  }

  size_t lanes_per_domain() const { return lanes_per_domain_; }

 private:
  // Stage nodes get a row (traced on lane A, ideal on lane B); every other
  // node reads its ideal value on every lane.
  void FillCosts(const Batch& b, size_t lanes, Scratch* scratch) const {
    const size_t dp = static_cast<size_t>(t_.dp);
    const size_t inst = t_.num_instances();
    const std::vector<NodeId>& nodes =
        stage_nodes_[static_cast<size_t>(b.stage)];
    scratch->rows.assign(t_.num_nodes(), nullptr);
    scratch->cost.resize(nodes.size() * lanes);
    for (size_t k = 0; k < nodes.size(); ++k) {
      const NodeId v = nodes[k];
      double* row = scratch->cost.data() + k * lanes;
      const double* traced = traced_.data() + v * inst + b.first_step * dp;
      if (lanes_per_domain_ == 1) {
        std::copy(traced, traced + lanes, row);
      } else {
        for (size_t i = 0; i < lanes / 2; ++i) {
          row[2 * i] = traced[i];
          row[2 * i + 1] = ideal_[v];
        }
      }
      scratch->rows[v] = row;
    }
  }

  // Sync domain k of batch `b` is worker (k % dp, b.stage) in step
  // b.first_step + k / dp.
  void Store(const Batch& b, const replay::StepTimes& times,
             WorkerUnfix* out) const {
    const size_t dp = static_cast<size_t>(t_.dp), steps = t_.steps.size();
    const size_t pp = static_cast<size_t>(t_.pp);
    for (size_t k = 0; k < times.span.size(); ++k) {
      const size_t step = b.first_step + k / dp, d = k % dp;
      const int64_t w = worker_of_[d * pp + static_cast<size_t>(b.stage)];
      if (w < 0) continue;
      const size_t slot = static_cast<size_t>(w) * steps + step;
      out->step_s[slot] = times.span[k];
      out->step_opt_s[slot] = times.opt[k];
    }
  }

  uint64_t CountChanged(const replay::WindowTimes& w,
                        const IdealTimes& ideal) const {
    uint64_t changed = 0;
    for (NodeId v = 0; v < t_.num_nodes(); ++v) {
      const double* s = w.start + v * w.stride;
      const double* e = w.end + v * w.stride;
      for (size_t l = 0; l < w.lanes; ++l) {
        changed += s[l] != ideal.start[v] || e[l] != ideal.end[v];
      }
    }
    return changed;
  }

  const PreparedTrace& t_;
  std::span<const double> traced_, ideal_;
  std::vector<std::vector<NodeId>> stage_nodes_;  // per stage
  std::vector<int64_t> worker_of_;  // [dp * pp + stage] -> worker index
  size_t lanes_per_domain_ = 1;
};

IdealTimes ReplayIdealStep(const PreparedTrace& t,
                           std::span<const double> ideal) {
  ScenarioRunner runner(t);
  runner.SetCosts({}, ideal);
  runner.RunIdealLane();
  const size_t n = t.num_nodes();
  const replay::ReplayTimes& times = runner.times();
  return IdealTimes{{times.start.data(), times.start.data() + n},
                    {times.end.data(), times.end.data() + n}};
}

}  // namespace

UnfixCosts DeriveUnfixCosts(const PreparedTrace& t,
                            std::span<const double> ideal_node_cost) {
  const size_t n = t.num_nodes(), inst = t.num_instances();
  UnfixCosts out{BigVector<double>(t.cost), {}};
  ScenarioRunner runner(t);
  runner.SetCosts(t.cost, {});
  // Lanes are instances here: window lane lo + l is instance lo + l.
  runner.RunTraced({}, [&](const replay::WindowTimes& w) {
    for (NodeId v = 0; v < n; ++v) {
      if (t.model.graph.is_comm(v)) continue;
      const double* s = w.start + v * w.stride;
      const double* e = w.end + v * w.stride;
      double* o = out.traced.data() + v * inst + w.lo;
      for (size_t l = 0; l < w.lanes; ++l) o[l] = e[l] - s[l];
    }
  });
  runner.SetCosts(t.cost, ideal_node_cost);
  runner.RunIdealLane();
  out.ideal.assign(ideal_node_cost.begin(), ideal_node_cost.end());
  for (NodeId v = 0; v < n; ++v) {
    if (!t.model.graph.is_comm(v)) {
      out.ideal[v] = runner.times().end[v] - runner.times().start[v];
    }
  }
  return out;
}

Result<WorkerUnfix> UnfixEachWorker(const PreparedTrace& t,
                                    std::span<const double> traced_cost,
                                    std::span<const double> ideal_cost,
                                    const UnfixEachWorkerOptions& options) {
  const size_t n = t.num_nodes(), steps = t.steps.size();
  if (traced_cost.size() != n * t.num_instances() || ideal_cost.size() != n) {
    return InvalidInput("un-fix each worker: expected " +
                        std::to_string(n * t.num_instances()) + " traced and " +
                        std::to_string(n) + " ideal costs, got " +
                        std::to_string(traced_cost.size()) + " and " +
                        std::to_string(ideal_cost.size()));
  }
  const Attribution attribution(t, traced_cost, ideal_cost);
  const std::vector<Batch> batches = attribution.Batches();
  IdealTimes ideal_times;
  if (options.measure_cone) ideal_times = ReplayIdealStep(t, ideal_cost);

  WorkerUnfix out;
  out.step_s.assign(t.workers.size() * steps, 0.0);
  out.step_opt_s.assign(t.workers.size() * steps, 0.0);
  const size_t threads = std::min(
      batches.size(), options.threads ? options.threads : HardwareThreads());
  std::vector<Scratch> scratch(std::max<size_t>(threads, 1));
  std::vector<uint64_t> changed(batches.size(), 0);
  // Each batch writes its own (worker, step) slots: deterministic.
  ParallelFor(batches.size(), threads, [&](size_t b, size_t worker) {
    changed[b] = attribution.Run(batches[b],
                                 options.measure_cone ? &ideal_times : nullptr,
                                 &scratch[worker], &out);
  });
  for (size_t k = 0; k < t.workers.size(); ++k) {
    out.mean_step_s.push_back(PairwiseMean(
        std::span<const double>(out.step_s.data() + k * steps, steps)));
    out.mean_opt_s.push_back(PairwiseMean(
        std::span<const double>(out.step_opt_s.data() + k * steps, steps)));
  }
  for (uint64_t c : changed) out.changed_ops += c;
  out.replayed_ops = static_cast<uint64_t>(n) * t.num_instances() *
                     attribution.lanes_per_domain() *
                     static_cast<uint64_t>(t.pp);
  return out;
}

}  // namespace strag::whatif
