// SPDX-License-Identifier: Apache-2.0
// SequenceModel: what a microbatch costs given its sequences, fitted from
// the trace (reference: mitigations.md §1.1, §1.6), and the rewrite of the
// compute costs for new microbatch contents.
//
// Per PP stage and direction (forward, backward), the traced duration of a
// microbatch over its worker's speed is fitted by least squares as
// c + a * sum(s) + b * sum(s^2) (a coefficient that comes out negative is
// dropped and the rest refitted); a worker's speed is the median of its
// ops over a first fit (so that drawing long sequences is not slowness). A new
// microbatch's cost is the traced one times fit(new) / fit(old): the worker's
// speed and the op's own noise stay.

#ifndef STRAG_SRC_MITIGATE_SEQUENCE_MODEL_H_
#define STRAG_SRC_MITIGATE_SEQUENCE_MODEL_H_

#include <string>
#include <vector>

#include "base/huge_page_allocator.h"
#include "mitigate/job_view.h"

namespace strag::mitigate {

struct CostFit {
  double c = 0, a = 0, b = 0;  // s, s per token, s per token^2
  double r2 = 0;               // share of the variance explained
  double Of(double s1, double s2) const { return c + a * s1 + b * s2; }
};

class SequenceModel {
 public:
  // Needs `trace.sequences` (an ops CSV layout).
  SequenceModel(const whatif::PreparedTrace& trace, const Cells& cells);

  // The fit of a PP stage (job coordinates) and direction (0 fwd, 1 bwd).
  const CostFit& Fit(int32_t stage, int direction) const {
    return fits_[2 * static_cast<size_t>(stage) +
                 static_cast<size_t>(direction)];
  }
  // What one sequence of s tokens costs the whole pipeline (all stages and
  // both directions, without the per-microbatch constant): the weight the
  // balancing uses.
  double a_total() const { return a_total_; }
  double b_total() const { return b_total_; }
  // "a = 1.2e-05 s/token, b = 3.1e-10 s/token^2 (R^2 0.98)" of stage 0's
  // forward and the range over stages.
  std::string Describe() const;
  // The traced costs with every compute op's microbatch given new sums:
  // s1[i * m + mb] = sum(s), s2 = sum(s^2) of microbatch mb of instance i.
  BigVector<double> Rewrite(const std::vector<double>& s1,
                            const std::vector<double>& s2) const;
  // The sums of the traced microbatches, same layout.
  void TracedSums(std::vector<double>* s1, std::vector<double>* s2) const;

 private:
  // A compute op of a microbatch: its slot, its worker (cell), its fit
  // [stage * 2 + direction], its microbatch [instance * m + mb], its cost.
  struct MicrobatchOp {
    size_t slot, cell, fit, at;
    double cost;
  };
  template <typename Visit>
  void ForEachOp(const Visit& visit) const;
  void FitAll(const std::vector<double>& s1, const std::vector<double>& s2,
              double mean1, double mean2);
  void EstimateSpeeds(const std::vector<double>& s1,
                      const std::vector<double>& s2);

  const whatif::PreparedTrace& trace_;
  const Cells& cells_;
  std::vector<double> speed_;  // per cell
  std::vector<CostFit> fits_;  // [stage * 2 + direction]
  double a_total_ = 0, b_total_ = 0;
};

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_SEQUENCE_MODEL_H_
