// SPDX-License-Identifier: Apache-2.0
// TraceEvidence: all the detectors read of a trace, kept per step (and per
// worker and step), so that it can be built a window of steps at a time:
// a job analysed in windows (load/streamed_ops_csv.h), in one process or
// many, is diagnosed from the same numbers, bit for bit, as the whole
// trace in memory. Every value is a sum, minimum or maximum within one
// step, in the order of the step's slots; what the detectors pool over
// steps they pool from these, in step order. Pure.

#ifndef STRAG_SRC_DIAGNOSE_TRACE_EVIDENCE_H_
#define STRAG_SRC_DIAGNOSE_TRACE_EVIDENCE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/collective.h"
#include "base/status.h"
#include "trace/topology.h"
#include "whatif/prepared_trace.h"

namespace strag::diagnose {

// Sums of the (forward, backward) pairs of a stage in a step, each
// centred on its instance's means: what a Pearson correlation pools.
struct PairSums {
  double n = 0, x = 0, y = 0, xy = 0, xx = 0, yy = 0;
};

struct TraceEvidence {
  // The job, as the prepared trace (or a windowed job's shape) says.
  whatif::Layout layout = whatif::Layout::kMegatron;
  int32_t dp = 0, pp = 0;
  std::vector<int64_t> steps;
  std::vector<whatif::Worker> workers;  // sorted by rank
  std::vector<int32_t> worker_rank;     // [dp rank * pp + stage]
  trace::Topology topology;
  // Host time the trace names and input sizes, [worker * steps + step]
  // (profiler traces; empty otherwise), as PreparedTrace has them.
  std::vector<float> data_loading_s, gc_s, input_size;
  std::string input_size_source;

  // Per step s (the first index of every array):
  std::vector<float> step_t_base;  // traced step time, s
  // [s * workers.size() + k]: compute time of worker k (forward and
  // backward of an ops CSV, compute segments of a profiler trace), s.
  std::vector<double> compute;
  // [s * cells() + w], w = dp rank * pp + stage (worker_rank's order):
  // the host gap at the start of the step (the larger of the smallest
  // launch delay of the root ops and the launch delay of the first
  // compute), and the launch delays of at least 5 ms, less the named data
  // loading they contain.
  std::vector<float> start_gap;
  std::vector<double> pause;
  std::vector<uint64_t> pauses;       // launch delays of at least 5 ms
  std::vector<double> pause_total;    // their sum, less named data loading
  std::vector<float> longest_pause;   // the longest, less named loading
  std::vector<double> named_loading;  // the named data loading they hold
  std::vector<double> host_delay;     // their sum, s
  // [s * pp + stage]: the stage's (forward, backward) pairs (ops CSVs).
  std::vector<PairSums> pairs;
  std::vector<uint8_t> stage_has_pairs;  // per stage

  size_t cells() const { return worker_rank.size(); }
};

// Builds the evidence of a job from its windows, in step order.
class EvidenceBuilder {
 public:
  // The job's facts from `shape` (its steps the whole job's; per-slot
  // arrays not needed).
  explicit EvidenceBuilder(const whatif::PreparedTrace& shape);
  // The next window: consecutive steps, the first after the previous
  // window's last (the first: any step, for a process's share). Ranges of
  // its steps on `threads` threads (0: one per core), the same values for
  // any number.
  void AddWindow(const whatif::PreparedTrace& window, size_t threads = 1);
  // Something went wrong with the windows: Finish fails, on every process
  // of a collective alike.
  void Fail() { failed_ = true; }
  // The evidence of every step. With a collective of several processes,
  // each having added its share of the steps (contiguous, in process
  // order), every process gets the whole job's. Fails when the windows
  // did not cover every step once.
  Result<TraceEvidence> Finish(Collective* collective = nullptr) &&;

 private:
  // The window's steps [first, end), whose values go from step `at` of the
  // arrays; `base`: the job index of the window's first step.
  void AddSteps(const whatif::PreparedTrace& window, size_t first, size_t end,
                size_t at, size_t base);

  TraceEvidence e_;
  std::vector<float> loading_;  // named data loading not yet spent
  size_t first_step_ = 0;       // of the windows added (in the job)
  size_t added_steps_ = 0;
  bool failed_ = false;  // a window did not follow the last, or Fail()
};

// The evidence of a whole prepared trace (its one window), on `threads`
// threads.
TraceEvidence EvidenceOf(const whatif::PreparedTrace& t, size_t threads = 1);

// Compute time of every worker of `window` (t.workers order) in each of its
// steps, added into out[step * workers + k].
void AddWorkerCompute(const whatif::PreparedTrace& window, double* out);

}  // namespace strag::diagnose

#endif  // STRAG_SRC_DIAGNOSE_TRACE_EVIDENCE_H_
