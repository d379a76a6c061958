// SPDX-License-Identifier: Apache-2.0
// stage_repartition: move transformer layers between pipeline stages
// (reference: mitigations.md §2). Per stage and direction, the traced work is
// T_s = n_s * l + X_s: l the per-layer cost (from the middle stages, or the
// lighter stage with two), X_s what the stage does besides its layers (the
// embedding on the first, the loss on the last). The exact min-max
// contiguous partition of the layers (X_0 on the first layer, X_last on the
// last) gives the new split; every forward and backward of stage s is then
// scaled by (T_s + (n'_s - n_s) l) / T_s, keeping per-rank and
// per-microbatch variation. Without the layer count the continuous bound:
// every stage at the mean stage's work.

#include <algorithm>
#include <numeric>

#include "base/partition.h"
#include "base/str_format.h"
#include "mitigate/policies/policies.h"

namespace strag::mitigate {
namespace {

// Direction of a compute op: 0 forward, 1 backward (a generic segment counts
// as forward); -1 not compute.
int Direction(trace::OpType type) {
  if (type == trace::OpType::kBackwardCompute) return 1;
  return IsComputeType(type) ? 0 : -1;
}

std::string ListText(const std::vector<int32_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) {
    s += (k ? "," : "") + std::to_string(v[k]);
  }
  return s + "]";
}

// "move layers 61-64 from stage 7 to stage 6" for every boundary that moves
// (layers numbered from 1).
std::string Moves(const std::vector<int32_t>& from,
                  const std::vector<int32_t>& to) {
  std::string out;
  int32_t a = 0, b = 0;
  for (size_t s = 0; s + 1 < from.size(); ++s) {
    a += from[s];
    b += to[s];
    if (a == b) continue;
    const int32_t lo = std::min(a, b) + 1, hi = std::max(a, b);
    const size_t src = b > a ? s + 1 : s, dst = b > a ? s : s + 1;
    out += (out.empty() ? "" : "; ") +
           (lo == hi ? StrFormat("move layer %d", lo)
                     : StrFormat("move layers %d-%d", lo, hi)) +
           StrFormat(" from stage %zu to stage %zu", src, dst);
  }
  return out;
}

class StageRepartition final : public Policy {
 public:
  std::string_view name() const override { return "stage_repartition"; }
  Family family() const override { return Family::kBalance; }

  Applicability Check(const JobView& job, const Cells& cells) const override {
    if (cells.job_pp() < 2) {
      return {false, job.trace.layout == whatif::Layout::kRanks &&
                             !job.trace.topology.known
                         ? "no pipeline found in the trace (no p2p chain): "
                           "give --pp to price a repartition"
                         : "one pipeline stage: nothing to repartition"};
    }
    const size_t pp = static_cast<size_t>(cells.job_pp());
    if (job.layers.size() > 1 && job.layers.size() != pp) {
      return {false, StrFormat("--layers gives %zu stages, the job has %zu",
                               job.layers.size(), pp)};
    }
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                std::string* why) const override {
    const whatif::PreparedTrace& t = job.trace;
    const auto pp = static_cast<size_t>(cells.job_pp());
    // Work per stage and direction: per worker and step, averaged.
    std::vector<double> work(2 * pp, 0.0), workers(pp, 0.0);
    for (const Cell& c : cells.all())
      workers[static_cast<size_t>(c.place.pp)]++;
    const size_t inst = t.num_instances();
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const int d = Direction(t.model.keys[v].type);
      if (d < 0) continue;
      for (size_t i = 0; i < inst; ++i) {
        const auto s = static_cast<size_t>(cells.Of(i, v).place.pp);
        work[2 * s + static_cast<size_t>(d)] += t.cost[t.Slot(v, i)];
      }
    }
    std::vector<double> total(pp);
    for (size_t s = 0; s < pp; ++s) {
      const double n = workers[s] * static_cast<double>(t.steps.size());
      work[2 * s] /= std::max(n, 1.0);
      work[2 * s + 1] /= std::max(n, 1.0);
      total[s] = work[2 * s] + work[2 * s + 1];
    }
    const double mean = std::accumulate(total.begin(), total.end(), 0.0) /
                        static_cast<double>(pp);
    if (!(mean > 0)) {
      *why = "the trace has no compute on its stages";
      return {};
    }
    const size_t heavy = static_cast<size_t>(
        std::max_element(total.begin(), total.end()) - total.begin());
    Proposal p;
    std::vector<double> scale(2 * pp, 1.0);  // per stage and direction
    std::vector<int32_t> from = CurrentSplit(job, pp, why);
    if (job.layers.empty()) {
      for (size_t s = 0; s < pp; ++s) {
        if (total[s] > 0) scale[2 * s] = scale[2 * s + 1] = mean / total[s];
        p.effects.memory_change_per_stage.push_back(
            total[s] > 0 ? mean / total[s] - 1 : 0);
      }
      p.bound = true;
      p.bound_note =
          "no layer count: the continuous bound (every stage at the mean "
          "stage's work); give --layers N (or num_layers in the metadata) "
          "for the concrete split";
      p.action = StrFormat(
          "repartition layers so that every stage does the mean stage's "
          "work (stage %zu does %.2fx the mean)",
          heavy, total[heavy] / mean);
      p.params = "split=continuous";
    } else {
      if (from.empty()) return {};
      std::vector<int32_t> to;
      if (!Split(work, from, &to, &scale, why)) return {};
      for (size_t s = 0; s < pp; ++s) {
        p.effects.memory_change_per_stage.push_back(
            from[s] > 0 ? static_cast<double>(to[s]) / from[s] - 1 : 0);
      }
      if (to == from) {
        *why = "the current split " + ListText(from) +
               " is already the min-max split of the layers";
        return {};
      }
      p.action =
          Moves(from, to) + ": split " + ListText(from) + " -> " + ListText(to);
      p.params = "split=" + ListText(to);
    }
    p.evidence =
        StrFormat("stage %zu does %.2fx the mean stage's compute; M_S = %.2f",
                  heavy, total[heavy] / mean, job.result.fix_last_stage.rem);
    std::vector<double> memory = std::move(p.effects.memory_change_per_stage);
    p.effects = RestartEffects(
        job.econ, Semantics::kIdentical,
        "the checkpoint is resharded; stages that take layers store more "
        "activations (up to p - s microbatches in flight on stage s)");
    p.effects.memory_change_per_stage = std::move(memory);
    Rewrite& rw = p.rewrite;
    rw.cost.assign(t.cost.begin(), t.cost.end());
    for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
      const int d = Direction(t.model.keys[v].type);
      if (d < 0) continue;
      for (size_t i = 0; i < inst; ++i) {
        const auto s = static_cast<size_t>(cells.Of(i, v).place.pp);
        rw.cost[t.Slot(v, i)] *= scale[2 * s + static_cast<size_t>(d)];
      }
    }
    std::vector<Proposal> out;
    out.push_back(std::move(p));
    return out;
  }

 private:
  // The current layers per stage: given, or an even split of the total.
  static std::vector<int32_t> CurrentSplit(const JobView& job, size_t pp,
                                           std::string* why) {
    if (job.layers.empty()) return {};
    if (job.layers.size() == pp) return job.layers;
    const int32_t layers = job.layers.front();
    if (layers < static_cast<int32_t>(pp) ||
        layers % static_cast<int32_t>(pp) != 0) {
      *why = StrFormat(
          "%d layers do not split evenly over %zu stages: give the current "
          "split as --layers a,b,...",
          layers, pp);
      return {};
    }
    return std::vector<int32_t>(pp, layers / static_cast<int32_t>(pp));
  }

  // The min-max split and the scale of every stage's work under it.
  static bool Split(const std::vector<double>& work,
                    const std::vector<int32_t>& from, std::vector<int32_t>* to,
                    std::vector<double>* scale, std::string* why) {
    const size_t pp = from.size();
    const int32_t layers = std::accumulate(from.begin(), from.end(), 0);
    if (layers < static_cast<int32_t>(pp)) {
      *why = "fewer layers than stages";
      return false;
    }
    // Per-layer cost per direction: the middle stages' mean, or the
    // lighter end with two stages (its extra taken as none).
    double per_layer[2] = {0, 0};
    for (int d = 0; d < 2; ++d) {
      std::vector<double> ratio;
      for (size_t s = 0; s < pp; ++s) {
        const bool middle = s > 0 && s + 1 < pp;
        if (from[s] > 0 && (middle || pp < 3)) {
          ratio.push_back(work[2 * s + static_cast<size_t>(d)] / from[s]);
        }
      }
      if (ratio.empty()) continue;
      per_layer[d] = pp < 3 ? *std::min_element(ratio.begin(), ratio.end())
                            : std::accumulate(ratio.begin(), ratio.end(), 0.0) /
                                  static_cast<double>(ratio.size());
    }
    const double unit = per_layer[0] + per_layer[1];
    if (!(unit > 0)) {
      *why = "no per-layer cost: the stages' compute is zero";
      return false;
    }
    auto extra = [&](size_t s) {
      return std::max(0.0, work[2 * s] + work[2 * s + 1] - from[s] * unit);
    };
    std::vector<double> items(static_cast<size_t>(layers), unit);
    items.front() += extra(0);
    items.back() += extra(pp - 1);
    *to = MinMaxContiguous(items, static_cast<int32_t>(pp));
    for (size_t s = 0; s < pp; ++s) {
      for (int d = 0; d < 2; ++d) {
        const double w = work[2 * s + static_cast<size_t>(d)];
        const double moved = ((*to)[s] - from[s]) * per_layer[d];
        (*scale)[2 * s + static_cast<size_t>(d)] =
            w > 0 ? std::max(w + moved, 0.0) / w : 1.0;
      }
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Policy> NewStageRepartition() {
  return std::make_unique<StageRepartition>();
}

}  // namespace strag::mitigate
