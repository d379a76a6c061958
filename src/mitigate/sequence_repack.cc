// SPDX-License-Identifier: Apache-2.0
#include "mitigate/sequence_repack.h"

#include <algorithm>

#include "base/partition.h"
#include "base/str_format.h"
#include "mitigate/sequence_model.h"

namespace strag::mitigate {

std::string SequencesMissing(const whatif::PreparedTrace& t) {
  if (t.layout == whatif::Layout::kRanks) {
    return "profiler traces record no per-microbatch sequence lengths";
  }
  if (t.sequences.empty()) {
    return "no sequence lengths in the trace: give a seq_lens column";
  }
  return "";
}

Proposal RepackProposal(const JobView& job, const Cells& cells,
                        bool across_replicas) {
  const whatif::PreparedTrace& t = job.trace;
  const SequenceModel model(t, cells);
  const whatif::SequenceLengths& q = t.sequences;
  const auto m = static_cast<size_t>(q.microbatches);
  const auto dp = static_cast<size_t>(t.dp);
  double cap = 0;  // the largest traced microbatch, or the user's cap
  for (size_t k = 0; k + 1 < q.offsets.size(); ++k) {
    double tokens = 0;
    for (uint64_t j = q.offsets[k]; j < q.offsets[k + 1]; ++j) {
      tokens += q.lengths[j];
    }
    cap = std::max(cap, tokens);
  }
  const bool given = job.token_cap > 0;
  if (given) cap = static_cast<double>(job.token_cap);
  std::vector<double> s1(dp * m * t.steps.size(), 0.0), s2(s1.size(), 0.0);
  std::vector<std::vector<int32_t>> step(dp * m);
  double worst_gap = 0;
  int64_t overflow = 0;
  for (size_t k = 0; k < t.steps.size(); ++k) {
    for (size_t j = 0; j < dp * m; ++j) {
      const size_t at = k * dp * m + j;
      step[j].assign(
          q.lengths.begin() + static_cast<ptrdiff_t>(q.offsets[at]),
          q.lengths.begin() + static_cast<ptrdiff_t>(q.offsets[at + 1]));
    }
    double gap = 0;
    const std::vector<std::vector<int32_t>> packed =
        RepackSequences(step, t.dp, q.microbatches, model.a_total(),
                        model.b_total(), cap, across_replicas, &gap, &overflow);
    worst_gap = std::max(worst_gap, gap);
    for (size_t j = 0; j < dp * m; ++j) {
      for (int32_t s : packed[j]) {
        const auto x = static_cast<double>(s);
        s1[k * dp * m + j] += x;
        s2[k * dp * m + j] += x * x;
      }
    }
  }
  Proposal p;
  p.rewrite.cost = model.Rewrite(s1, s2);
  const double ratio =
      model.a_total() > 0 ? model.b_total() / model.a_total() : 0;
  if (across_replicas) {
    p.action = StrFormat(
        "balance sequences across DP with Karmarkar-Karp on a*s + b*s^2 "
        "(b/a = %.3g per token, fitted per stage and direction), then pack "
        "each rank's into its %zu microbatches under %.0f tokens",
        ratio, m, cap);
    p.params = StrFormat("algorithm=karmarkar_karp,b_over_a=%.4g", ratio);
  } else {
    p.action = StrFormat(
        "pack each rank's sequences into its %zu microbatches by cost "
        "(LPT on a*s + b*s^2, b/a = %.3g) under a cap of %.0f tokens",
        m, ratio, cap);
    p.params = StrFormat("cap_tokens=%.0f", cap);
  }
  p.evidence = model.Describe() +
               (across_replicas
                    ? StrFormat("; the replica split is within %.2f%% of its "
                                "lower bound in every step",
                                100 * worst_gap)
                    : std::string());
  if (overflow > 0) {
    p.evidence += StrFormat(
        "; %lld sequence(s) found no microbatch with room under the cap and "
        "went to the emptiest",
        static_cast<long long>(overflow));
  }
  p.effects.restart = true;
  p.effects.downtime_s = job.econ.restart_s;
  p.effects.semantics =
      across_replicas ? Semantics::kDataOrder : Semantics::kIdentical;
  const std::string memory =
      overflow > 0 ? StrFormat(
                         "some microbatches exceed the cap of %.0f tokens (a "
                         "sequence found no room): more activation memory",
                         cap)
      : given ? StrFormat(
                    "no microbatch holds more than the %.0f tokens of "
                    "--token-cap",
                    cap)
              : "no microbatch holds more tokens than today's largest: "
                "activation memory as today";
  p.effects.caveat =
      across_replicas
          ? "samples move between ranks: normalise the loss per token over "
            "the global batch (Megatron --calculate-per-token-loss); " +
                memory
          : memory;
  return p;
}

}  // namespace strag::mitigate
