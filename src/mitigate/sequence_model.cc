// SPDX-License-Identifier: Apache-2.0
#include "mitigate/sequence_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "base/median.h"
#include "base/str_format.h"

namespace strag::mitigate {
namespace {

// Normal equations of y ~ x0 + x1 + x2 (features pre-scaled).
struct Normal {
  std::array<std::array<double, 3>, 3> xx{};
  std::array<double, 3> xy{};
  double yy = 0, y = 0, n = 0;
  void Add(const std::array<double, 3>& x, double value) {
    for (size_t p = 0; p < 3; ++p) {
      for (size_t q = 0; q < 3; ++q) xx[p][q] += x[p] * x[q];
      xy[p] += x[p] * value;
    }
    yy += value * value;
    y += value;
    n += 1;
  }
};

// Least squares on the features in `use` (a subset of {0, 1, 2}); false when
// singular. beta of unused features is 0; *sse the residual sum of squares.
bool Solve(const Normal& e, const std::array<bool, 3>& use,
           std::array<double, 3>* beta, double* sse) {
  std::array<size_t, 3> idx{};
  size_t k = 0;
  for (size_t p = 0; p < 3; ++p) {
    if (use[p]) idx[k++] = p;
  }
  double m[3][4] = {};
  for (size_t r = 0; r < k; ++r) {
    for (size_t c = 0; c < k; ++c) m[r][c] = e.xx[idx[r]][idx[c]];
    m[r][k] = e.xy[idx[r]];
  }
  for (size_t col = 0; col < k; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < k; ++r) {
      if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
    }
    if (std::abs(m[pivot][col]) < 1e-12 * std::max(1.0, e.n)) return false;
    for (size_t c = 0; c <= k; ++c) std::swap(m[col][c], m[pivot][c]);
    for (size_t r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = m[r][col] / m[col][col];
      for (size_t c = col; c <= k; ++c) m[r][c] -= f * m[col][c];
    }
  }
  beta->fill(0.0);
  for (size_t r = 0; r < k; ++r) (*beta)[idx[r]] = m[r][k] / m[r][r];
  double fit = 0, cross = 0;
  for (size_t p = 0; p < 3; ++p) {
    cross += (*beta)[p] * e.xy[p];
    for (size_t q = 0; q < 3; ++q) fit += (*beta)[p] * e.xx[p][q] * (*beta)[q];
  }
  *sse = std::max(0.0, e.yy - 2 * cross + fit);
  return true;
}

// The best non-negative fit over the subsets of {constant, s, s^2}.
CostFit FitOf(const Normal& e, double scale1, double scale2) {
  CostFit best;
  double best_sse = std::numeric_limits<double>::infinity();
  for (int mask = 7; mask >= 1; --mask) {
    const std::array<bool, 3> use = {(mask & 1) != 0, (mask & 2) != 0,
                                     (mask & 4) != 0};
    std::array<double, 3> beta{};
    double sse = 0;
    if (!Solve(e, use, &beta, &sse)) continue;
    if (beta[0] < 0 || beta[1] < 0 || beta[2] < 0) continue;
    if (sse < best_sse * (1 - 1e-12)) {
      best_sse = sse;
      best = {beta[0], beta[1] / scale1, beta[2] / scale2, 0};
    }
  }
  const double var = e.n > 0 ? e.yy - e.y * e.y / e.n : 0;
  best.r2 = var > 0 && std::isfinite(best_sse) ? 1 - best_sse / var : 0;
  return best;
}

int Direction(trace::OpType type) {
  return type == trace::OpType::kBackwardCompute ? 1 : 0;
}

}  // namespace

template <typename Visit>
void SequenceModel::ForEachOp(const Visit& visit) const {
  const whatif::PreparedTrace& t = trace_;
  const size_t inst = t.num_instances();
  const auto m = static_cast<size_t>(t.sequences.microbatches);
  for (graph::NodeId v = 0; v < t.num_nodes(); ++v) {
    const int32_t mb = t.sequences.node_microbatch[v];
    if (mb < 0 || !trace::IsCompute(t.model.keys[v].type)) continue;
    const auto d = static_cast<size_t>(Direction(t.model.keys[v].type));
    for (size_t i = 0; i < inst; ++i) {
      const size_t cell = cells_.IndexOf(i, v);
      const auto stage = static_cast<size_t>(cells_.all()[cell].place.pp);
      const size_t slot = t.Slot(v, i);
      visit(MicrobatchOp{slot, cell, 2 * stage + d,
                         i * m + static_cast<size_t>(mb), t.cost[slot]});
    }
  }
}

SequenceModel::SequenceModel(const whatif::PreparedTrace& t, const Cells& cells)
    : trace_(t), cells_(cells), speed_(cells.all().size(), 1.0) {
  std::vector<double> s1, s2;
  TracedSums(&s1, &s2);
  double mean1 = 0, mean2 = 0;
  for (size_t k = 0; k < s1.size(); ++k) {
    mean1 += s1[k];
    mean2 += s2[k];
  }
  mean1 = std::max(mean1 / static_cast<double>(s1.size()), 1.0);
  mean2 = std::max(mean2 / static_cast<double>(s2.size()), 1.0);
  // Twice: fit with every worker at speed 1, take each worker's speed as
  // the median of its ops over the fit (the lengths explained first: a
  // worker that drew long sequences is not slow), fit again.
  for (int round = 0; round < 2; ++round) {
    FitAll(s1, s2, mean1, mean2);
    if (round == 0) EstimateSpeeds(s1, s2);
  }
}

void SequenceModel::FitAll(const std::vector<double>& s1,
                           const std::vector<double>& s2, double mean1,
                           double mean2) {
  std::vector<Normal> eq(2 * static_cast<size_t>(cells_.job_pp()));
  ForEachOp([&](const MicrobatchOp& op) {
    eq[op.fit].Add({1.0, s1[op.at] / mean1, s2[op.at] / mean2},
                   op.cost / speed_[op.cell]);
  });
  fits_.clear();
  a_total_ = b_total_ = 0;
  for (const Normal& e : eq) {
    fits_.push_back(FitOf(e, mean1, mean2));
    a_total_ += fits_.back().a;
    b_total_ += fits_.back().b;
  }
}

void SequenceModel::EstimateSpeeds(const std::vector<double>& s1,
                                   const std::vector<double>& s2) {
  std::vector<std::vector<double>> ratios(speed_.size());
  ForEachOp([&](const MicrobatchOp& op) {
    const double fit = fits_[op.fit].Of(s1[op.at], s2[op.at]);
    if (fit > 0) ratios[op.cell].push_back(op.cost / fit);
  });
  for (size_t c = 0; c < speed_.size(); ++c) {
    if (!ratios[c].empty()) speed_[c] = Median(&ratios[c]);
    if (!(speed_[c] > 0)) speed_[c] = 1.0;
  }
}

void SequenceModel::TracedSums(std::vector<double>* s1,
                               std::vector<double>* s2) const {
  const whatif::SequenceLengths& q = trace_.sequences;
  const size_t count = q.offsets.size() - 1;
  s1->assign(count, 0.0);
  s2->assign(count, 0.0);
  for (size_t k = 0; k < count; ++k) {
    for (uint64_t j = q.offsets[k]; j < q.offsets[k + 1]; ++j) {
      const auto x = static_cast<double>(q.lengths[j]);
      (*s1)[k] += x;
      (*s2)[k] += x * x;
    }
  }
}

BigVector<double> SequenceModel::Rewrite(const std::vector<double>& s1,
                                         const std::vector<double>& s2) const {
  const whatif::PreparedTrace& t = trace_;
  std::vector<double> o1, o2;
  TracedSums(&o1, &o2);
  BigVector<double> cost(t.cost.begin(), t.cost.end());
  ForEachOp([&](const MicrobatchOp& op) {
    const CostFit& f = fits_[op.fit];
    const double before = f.Of(o1[op.at], o2[op.at]);
    if (before > 0) cost[op.slot] *= f.Of(s1[op.at], s2[op.at]) / before;
  });
  return cost;
}

std::string SequenceModel::Describe() const {
  const CostFit& f = fits_.front();
  double lo = 1, hi = 0;
  for (const CostFit& x : fits_) {
    lo = std::min(lo, x.r2);
    hi = std::max(hi, x.r2);
  }
  return StrFormat(
      "stage 0 forward: %.3g s + %.3g s/token + %.3g s/token^2; R^2 "
      "%.2f-%.2f over the %zu stage-directions",
      f.c, f.a, f.b, lo, hi, fits_.size());
}

}  // namespace strag::mitigate
