// SPDX-License-Identifier: Apache-2.0
// sequence_balance: give every DP rank of a stage the same work by moving
// sequences between them (reference: mitigations.md §1). With sequence
// lengths: Karmarkar-Karp across the DP replicas on the fitted cost, then
// LPT into each replica's microbatches under today's largest microbatch
// (sequence_repack.h). Without them, the microbatch-duration bound of §1.6:
// every
// forward (backward) of a stage in a step becomes the mean over the stage's
// DP ranks and microbatches, each worker keeping its own speed (a slow
// machine stays slow: balancing moves work, not speed).

#include <algorithm>
#include <map>
#include <tuple>

#include "base/median.h"
#include "base/str_format.h"
#include "diagnose/evidence.h"
#include "mitigate/policies/policies.h"
#include "mitigate/sequence_repack.h"
#include "mitigate/worker_work.h"

namespace strag::mitigate {
namespace {

class SequenceBalance final : public Policy {
 public:
  std::string_view name() const override { return "sequence_balance"; }
  Family family() const override { return Family::kBalance; }

  Applicability Check(const JobView& job, const Cells& cells) const override {
    if (cells.job_dp() < 2) {
      return {false,
              job.trace.layout == whatif::Layout::kRanks &&
                      !job.trace.topology.known
                  ? "the trace's DP replicas are unknown: give --dp "
                    "to price balancing across them"
                  : "one DP replica: no ranks to move sequences between"};
    }
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string* why) const override {
    std::vector<Proposal> out;
    if (SequencesMissing(job.trace).empty()) {
      out.push_back(RepackProposal(job, cells, true));
    } else {
      out.push_back(Bound(job, cells, why));
    }
    if (out.back().rewrite.cost.empty()) out.clear();
    return out;
  }

 private:
  // Without lengths: the microbatch-duration bound.
  static Proposal Bound(const JobView& job, const Cells& cells,
                        std::string* why) {
    const whatif::PreparedTrace& t = job.trace;
    const size_t steps = t.steps.size(), inst = t.num_instances();
    const auto per_worker = diagnose::WorkerComputePerStep(t);
    const std::vector<double> speed = SpeedFactors(t, cells, per_worker);
    // Group of a node: its stage and direction (ops CSV: every microbatch
    // of a stage does the same layers), or its stage and position in the
    // step (profiler traces: segment k of a rank is segment k of its peers).
    std::map<std::tuple<int32_t, int, int32_t>, size_t> ids;
    std::vector<int64_t> group(t.num_nodes(), -1);
    const bool ranks = t.layout == whatif::Layout::kRanks;
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const graph::OpKey& k = t.model.keys[v];
      if (!IsComputeType(k.type)) continue;
      const int32_t stage = cells.Of(0, v).place.pp;
      const auto key =
          std::tuple(stage, static_cast<int>(k.type), ranks ? k.seq_id : 0);
      group[v] =
          static_cast<int64_t>(ids.emplace(key, ids.size()).first->second);
    }
    if (ids.empty()) {
      *why = "the trace has no compute ops";
      return Proposal{};
    }
    // Mean work (cost over the worker's speed) per group and step.
    std::vector<double> sum(ids.size() * steps, 0.0), count(sum.size(), 0.0);
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      if (group[v] < 0) continue;
      for (size_t i = 0; i < inst; ++i) {
        const size_t g =
            static_cast<size_t>(group[v]) * steps + cells.StepOf(i);
        sum[g] += t.cost[t.Slot(v, i)] / speed[cells.IndexOf(i, v)];
        count[g] += 1;
      }
    }
    Proposal p;
    Rewrite& rw = p.rewrite;
    rw.cost.assign(t.cost.begin(), t.cost.end());
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      if (group[v] < 0) continue;
      for (size_t i = 0; i < inst; ++i) {
        const size_t g =
            static_cast<size_t>(group[v]) * steps + cells.StepOf(i);
        rw.cost[t.Slot(v, i)] = sum[g] / count[g] * speed[cells.IndexOf(i, v)];
      }
    }
    p.action =
        "balance sequences across the DP ranks of each stage every step "
        "(Karmarkar-Karp on a*s + b*s^2 fitted per stage and direction)";
    p.params = "algorithm=karmarkar_karp";
    p.bound = true;
    p.bound_note =
        SequencesMissing(t) +
        "; the upper bound from microbatch durations (every microbatch of a "
        "stage at the step's mean, each worker keeping its speed)";
    p.evidence = StrFormat(
        "in the median step the slowest DP rank of a stage computes %.2fx "
        "its stage's mean; worker speeds kept (slowest %.2fx its stage)",
        MedianSpread(per_worker, cells, steps),
        *std::max_element(speed.begin(), speed.end()));
    p.effects = RestartEffects(
        job.econ, Semantics::kDataOrder,
        "samples move between ranks: normalise the loss per token over the "
        "global batch (Megatron --calculate-per-token-loss); ranks holding "
        "the long sequences need more activation memory");
    return p;
  }

  // Median over (step, stage) of the slowest worker's compute over the
  // stage's mean.
  static double MedianSpread(const std::vector<std::vector<double>>& per_worker,
                             const Cells& cells, size_t steps) {
    const auto pp = static_cast<size_t>(cells.job_pp());
    std::vector<double> mx(pp * steps, 0.0), sm(pp * steps, 0.0), n(pp, 0.0);
    for (size_t c = 0; c < cells.all().size(); ++c) {
      const auto s = static_cast<size_t>(cells.all()[c].place.pp);
      n[s] += 1;
      for (size_t k = 0; k < steps; ++k) {
        mx[s * steps + k] = std::max(mx[s * steps + k], per_worker[c][k]);
        sm[s * steps + k] += per_worker[c][k];
      }
    }
    std::vector<double> ratio;
    for (size_t s = 0; s < pp; ++s) {
      for (size_t k = 0; k < steps; ++k) {
        if (sm[s * steps + k] > 0) {
          ratio.push_back(mx[s * steps + k] / (sm[s * steps + k] / n[s]));
        }
      }
    }
    return ratio.empty() ? 1.0 : Median(&ratio);
  }
};

}  // namespace

std::unique_ptr<Policy> NewSequenceBalance() {
  return std::make_unique<SequenceBalance>();
}

}  // namespace strag::mitigate
