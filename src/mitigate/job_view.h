// SPDX-License-Identifier: Apache-2.0
// JobView: the analysed job as mitigation policies see it (read-only), and
// Cells, the map from every traced worker to its slots in the replay arrays.
//
// The replay arrays are laid out [node * instances + instance]. For an ops
// CSV (Layout::kMegatron) a worker is (dp rank, stage): its slots are the
// nodes of its stage on the instances of its DP rank. For profiler traces
// (Layout::kRanks) a worker is one model "stage" (the rank's index) on every
// instance (= step). Cells hides the difference.

#ifndef STRAG_SRC_MITIGATE_JOB_VIEW_H_
#define STRAG_SRC_MITIGATE_JOB_VIEW_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "diagnose/diagnosis.h"
#include "trace/topology.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::mitigate {

// What the job costs and how it is run; the planner's flags.
struct Economics {
  int64_t gpus = 1;             // the job's GPUs
  double usd_per_gpu_hour = 0;  // price
  int32_t gpus_per_node = 8;
  double horizon_hours = 24;    // how long the job runs on: the plan's span
  double checkpoint_interval_s = 3600;  // progress lost on a sudden restart:
                                        // half of it
  double restart_s = 600;               // stop, reschedule, load, warm up
};

// One traced worker: its coordinates in the model and its place in the job.
struct Cell {
  int32_t model_dp = 0;     // instance % dp (0 for profiler traces)
  int32_t model_stage = 0;  // OpKey::stage
  trace::RankPlace place;   // global rank, DP replica, PP stage, node
};

class Cells {
 public:
  // `gpus_per_node` places ops CSV workers on nodes (rank / gpus_per_node);
  // profiler traces keep their topology's nodes.
  Cells(const whatif::PreparedTrace& trace, int32_t gpus_per_node);

  const std::vector<Cell>& all() const { return cells_; }
  // The cell of (instance, node): which worker ran that slot.
  const Cell& Of(size_t instance, graph::NodeId v) const {
    const size_t dp = static_cast<size_t>(dp_);
    return cells_[index_[(instance % dp) * static_cast<size_t>(pp_) +
                         static_cast<size_t>(keys_[v].stage)]];
  }
  size_t IndexOf(size_t instance, graph::NodeId v) const {
    const size_t dp = static_cast<size_t>(dp_);
    return index_[(instance % dp) * static_cast<size_t>(pp_) +
                  static_cast<size_t>(keys_[v].stage)];
  }
  // The step index of an instance.
  size_t StepOf(size_t instance) const {
    return instance / static_cast<size_t>(dp_);
  }
  // Job-level sizes from the topology.
  int32_t job_dp() const { return job_dp_; }
  int32_t job_pp() const { return job_pp_; }

 private:
  int32_t dp_ = 1, pp_ = 1, job_dp_ = 1, job_pp_ = 1;
  const std::vector<graph::OpKey>& keys_;
  std::vector<Cell> cells_;
  std::vector<size_t> index_;  // [model_dp * pp + model_stage] -> cell
};

struct JobView {
  const whatif::PreparedTrace& trace;
  const whatif::WhatIfResult& result;
  const diagnose::Diagnosis& diagnosis;
  Economics econ;
  // Transformer layers, total or per stage (`--layers`, or the metadata's
  // num_layers / layers_per_stage); empty when unknown.
  std::vector<int32_t> layers;
  // Tokens a microbatch may hold (`--token-cap`); 0: the largest traced
  // microbatch's (activation memory as today).
  int64_t token_cap = 0;
};

// True for the op types whose duration is work on the device (forward,
// backward, a generic compute segment).
bool IsComputeType(trace::OpType type);

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_JOB_VIEW_H_
