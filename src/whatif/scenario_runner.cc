// SPDX-License-Identifier: Apache-2.0
#include "whatif/scenario_runner.h"

#include <algorithm>

namespace strag::whatif {
namespace {

bool AllSet(const std::vector<uint8_t>& mask) {
  return std::all_of(mask.begin(), mask.end(), [](uint8_t b) { return b; });
}
bool NoneSet(const std::vector<uint8_t>& mask) {
  return std::none_of(mask.begin(), mask.end(), [](uint8_t b) { return b; });
}

}  // namespace

// An instance is all-ideal when no term touches it (base ideal) or one term
// covers all its ops (base traced); those of a step share one lane.
void ScenarioRunner::BuildLanes(Base base, const Selection& x) {
  const size_t dp = static_cast<size_t>(trace_->dp);
  std::vector<uint8_t> empty_nodes(x.terms.size()), full_nodes(x.terms.size());
  for (size_t k = 0; k < x.terms.size(); ++k) {
    empty_nodes[k] = NoneSet(x.terms[k].nodes);
    full_nodes[k] = AllSet(x.terms[k].nodes);
  }
  lane_instance_.clear();
  sync_offsets_.assign(1, 0);
  for (size_t step = 0; step < trace_->steps.size(); ++step) {
    bool folded = false;
    for (size_t d = 0; d < dp; ++d) {
      const size_t i = step * dp + d;
      bool touched = false, covered = false;
      for (size_t k = 0; k < x.terms.size(); ++k) {
        if (!x.terms[k].instances[i] || empty_nodes[k]) continue;
        touched = true;
        covered |= full_nodes[k] != 0;
      }
      const bool all_ideal = base == Base::kIdeal ? !touched : covered;
      if (!all_ideal) {
        lane_instance_.push_back(static_cast<int64_t>(i));
      } else if (!folded) {
        lane_instance_.push_back(-1);
        folded = true;
      }
    }
    sync_offsets_.push_back(static_cast<uint32_t>(lane_instance_.size()));
  }
}

// Per node, the lanes read the traced row, the ideal value, or a mix; only
// mixed rows are written out.
replay::StepTimes ScenarioRunner::Run(Base base, const Selection& x) {
  BuildLanes(base, x);
  const size_t lanes = lane_instance_.size();
  const size_t n = trace_->num_nodes();
  const size_t inst = trace_->num_instances();
  bool identity = lanes == inst;
  for (size_t l = 0; identity && l < lanes; ++l) {
    identity = lane_instance_[l] == static_cast<int64_t>(l);
  }
  rows_.assign(n, nullptr);
  cost_.Resize(n * lanes);
  std::vector<const SelectionTerm*> active, previous;
  std::vector<uint8_t> traced_lane(lanes);
  size_t num_traced = 0;
  for (size_t v = 0; v < n; ++v) {
    active.clear();
    for (const SelectionTerm& term : x.terms) {
      if (term.nodes[v]) active.push_back(&term);
    }
    // Which lanes read the traced row depends on the node only through its
    // active terms: the same as the previous node's (a term over every node,
    // as a DP rank's) reuses its lanes.
    if (v == 0 || active != previous) {
      num_traced = 0;
      for (size_t l = 0; l < lanes; ++l) {
        const int64_t i = lane_instance_[l];
        bool hit = false;
        for (const SelectionTerm* term : active) {
          hit |= i >= 0 && term->instances[static_cast<size_t>(i)] != 0;
        }
        traced_lane[l] = i >= 0 && ((base == Base::kTraced) != hit);
        num_traced += traced_lane[l];
      }
      previous = active;
    }
    const double* traced = traced_cost_.data() + v * inst;
    if (num_traced == 0) continue;  // the ideal value on every lane
    if (num_traced == lanes && identity) {
      rows_[v] = traced;
      continue;
    }
    double* row = cost_.data() + v * lanes;
    for (size_t l = 0; l < lanes; ++l) {
      row[l] = traced_lane[l] ? traced[lane_instance_[l]] : ideal_cost_[v];
    }
    rows_[v] = row;
  }
  return Execute({}, nullptr);
}

void ScenarioRunner::IdentityLanes() {
  const size_t dp = static_cast<size_t>(trace_->dp);
  lane_instance_.resize(trace_->num_instances());
  sync_offsets_.clear();
  for (size_t i = 0; i < lane_instance_.size(); ++i) {
    lane_instance_[i] = static_cast<int64_t>(i);
    if (i % dp == 0) sync_offsets_.push_back(static_cast<uint32_t>(i));
  }
  sync_offsets_.push_back(static_cast<uint32_t>(lane_instance_.size()));
}

replay::StepTimes ScenarioRunner::RunTraced(
    std::span<const float> launch_delay, const replay::WindowVisitor& visit) {
  IdentityLanes();
  rows_ = replay::DenseRows(traced_cost_, trace_->num_nodes(),
                            trace_->num_instances());
  return Execute(launch_delay, nullptr, visit);
}

replay::StepTimes ScenarioRunner::RunIdealLane() {
  lane_instance_.assign(1, -1);
  sync_offsets_ = {0, 1};
  rows_.assign(trace_->num_nodes(), nullptr);
  return Execute({}, &times_);
}

replay::StepTimes ScenarioRunner::Execute(std::span<const float> launch_delay,
                                          replay::ReplayTimes* keep,
                                          const replay::WindowVisitor& visit) {
  std::span<const double> values = ideal_cost_;
  if (values.empty()) {
    zeros_.assign(trace_->num_nodes(), 0.0);
    values = zeros_;
  }
  const replay::ReplayInput input{
      .graph = &trace_->model.graph,
      .num_lanes = lane_instance_.size(),
      .cost = {.rows = rows_, .values = values},
      .launch_delay = launch_delay,
      .sync_offsets = sync_offsets_,
      .optimizer_nodes = trace_->model.optimizer_nodes,
  };
  replayed_ops_ += trace_->num_nodes() * lane_instance_.size();
  return replay::Replay(input, &workspace_, keep, visit);
}

}  // namespace strag::whatif
