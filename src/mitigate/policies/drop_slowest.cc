// SPDX-License-Identifier: Apache-2.0
// drop_slowest: skip the slowest microbatches of each step (drop-k, in the
// spirit of DropCompute; reference: mitigations.md §4). A microbatch's cost
// is its forwards and backwards on every stage of its replica; the slowest
// 1% of (replica, microbatch) pairs of a step (at least one) lose their
// compute on every stage. Changes the training: those tokens are not
// trained on.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/str_format.h"
#include "mitigate/policies/policies.h"
#include "mitigate/worker_work.h"

namespace strag::mitigate {
namespace {

constexpr double kDropShare = 0.01;

class DropSlowest final : public Policy {
 public:
  std::string_view name() const override { return "drop_slowest"; }
  Family family() const override { return Family::kDropAsync; }

  Applicability Check(const JobView& job, const Cells&) const override {
    if (job.trace.layout == whatif::Layout::kRanks) {
      return {false,
              "profiler traces name no microbatches (ops CSV and simulated "
              "jobs only)"};
    }
    if (job.trace.dp * Microbatches(job.trace) < 2) {
      return {false, "one microbatch per step: nothing to drop"};
    }
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells&,
                                std::string*) const override {
    const whatif::PreparedTrace& t = job.trace;
    const auto dp = static_cast<size_t>(t.dp);
    const size_t steps = t.steps.size(), inst = t.num_instances();
    // Microbatch k of a stage: its k-th forward and k-th backward.
    int32_t max_seq = 0;
    for (const graph::OpKey& key : t.model.keys) {
      if (key.type == trace::OpType::kForwardCompute ||
          key.type == trace::OpType::kBackwardCompute) {
        max_seq = std::max(max_seq, key.seq_id + 1);
      }
    }
    const auto units = static_cast<size_t>(max_seq);
    auto is_mb = [](trace::OpType type) {
      return type == trace::OpType::kForwardCompute ||
             type == trace::OpType::kBackwardCompute;
    };
    const auto drop = static_cast<size_t>(std::max(
        1.0, std::round(kDropShare * static_cast<double>(dp * units))));
    Proposal p;
    p.rewrite.cost.assign(t.cost.begin(), t.cost.end());
    std::vector<double> work(dp * units);
    std::vector<size_t> order(dp * units);
    std::vector<uint8_t> dropped(inst * units, 0);
    for (size_t k = 0; k < steps; ++k) {
      std::fill(work.begin(), work.end(), 0.0);
      for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
        const graph::OpKey& key = t.model.keys[v];
        if (!is_mb(key.type)) continue;
        for (size_t d = 0; d < dp; ++d) {
          work[d * units + static_cast<size_t>(key.seq_id)] +=
              t.cost[t.Slot(v, k * dp + d)];
        }
      }
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return work[a] > work[b]; });
      for (size_t q = 0; q < drop && q < order.size(); ++q) {
        const size_t d = order[q] / units, mb = order[q] % units;
        dropped[(k * dp + d) * units + mb] = 1;
      }
    }
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const graph::OpKey& key = t.model.keys[v];
      if (!is_mb(key.type)) continue;
      for (size_t i = 0; i < inst; ++i) {
        if (dropped[i * units + static_cast<size_t>(key.seq_id)]) {
          p.rewrite.cost[t.Slot(v, i)] = 0;
        }
      }
    }
    const double share =
        static_cast<double>(drop) / static_cast<double>(dp * units);
    p.action = StrFormat(
        "drop the slowest %zu of %zu microbatches of each step (%.1f%%) and "
        "renormalise the loss by the microbatches kept",
        drop, dp * units, 100 * share);
    p.params = StrFormat("drop=%zu", drop);
    p.evidence = StrFormat("%zu microbatches per step over %zu DP replicas",
                           dp * units, dp);
    p.effects = RestartEffects(
        job.econ, Semantics::kBatchNoise,
        StrFormat(
            "changes the training: %.1f%% of the tokens are not trained on, "
            "mostly the longest sequences (a bias against long documents)",
            100 * share));
    p.effects.token_fraction = 1 - share;
    std::vector<Proposal> out;
    out.push_back(std::move(p));
    return out;
  }
};

}  // namespace

std::unique_ptr<Policy> NewDropSlowest() {
  return std::make_unique<DropSlowest>();
}

}  // namespace strag::mitigate
