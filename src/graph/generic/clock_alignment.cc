// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/clock_alignment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/median.h"
#include "graph/disjoint_sets.h"

namespace strag::graph {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// a - b without signed overflow (wraps on absurd inputs instead of UB).
int64_t Difference(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}

// The usable collectives: distinct members, at least two, each end relative
// to the collective's first member.
struct Problem {
  std::vector<uint32_t> begin = {0};
  std::vector<int32_t> rank;         // per entry
  std::vector<double> rel;           // per entry: end - base of collective
  std::vector<uint32_t> collective;  // per entry
  std::vector<std::vector<uint32_t>> entries_of_rank;
  size_t size() const { return begin.size() - 1; }
};

Problem BuildProblem(size_t num_ranks, const CollectiveEnds& ends) {
  Problem p;
  p.entries_of_rank.resize(num_ranks);
  std::vector<uint32_t> seen(num_ranks, kNone);
  for (size_t c = 0; c < ends.size(); ++c) {
    const size_t first = p.rank.size();
    int64_t base = 0;
    for (uint32_t e = ends.begin[c]; e < ends.begin[c + 1]; ++e) {
      const int32_t r = ends.rank[e];
      if (r < 0 || static_cast<size_t>(r) >= num_ranks) continue;
      const auto ri = static_cast<size_t>(r);
      if (seen[ri] == c) continue;
      seen[ri] = static_cast<uint32_t>(c);
      if (p.rank.size() == first) base = ends.end_ns[e];
      p.rank.push_back(r);
      p.rel.push_back(static_cast<double>(Difference(ends.end_ns[e], base)));
    }
    if (p.rank.size() - first < 2) {
      p.rank.resize(first);
      p.rel.resize(first);
      continue;
    }
    const auto id = static_cast<uint32_t>(p.size());
    for (size_t e = first; e < p.rank.size(); ++e) {
      p.collective.push_back(id);
      p.entries_of_rank[static_cast<size_t>(p.rank[e])].push_back(
          static_cast<uint32_t>(e));
    }
    p.begin.push_back(static_cast<uint32_t>(p.rank.size()));
  }
  return p;
}

// Per rank: the lowest rank index connected to it through collectives, or
// -1 when it is in none.
std::vector<int32_t> Anchors(const Problem& p, size_t num_ranks) {
  DisjointSets sets(num_ranks);
  for (size_t c = 0; c < p.size(); ++c) {
    for (uint32_t e = p.begin[c] + 1; e < p.begin[c + 1]; ++e) {
      sets.Union(static_cast<uint32_t>(p.rank[p.begin[c]]),
                 static_cast<uint32_t>(p.rank[e]));
    }
  }
  // Ranks ascend: the first rank seen of a set is its lowest.
  std::vector<int32_t> lowest(num_ranks, -1);
  std::vector<int32_t> anchor(num_ranks, -1);
  for (size_t r = 0; r < num_ranks; ++r) {
    if (p.entries_of_rank[r].empty()) continue;
    int32_t& low = lowest[sets.Find(static_cast<uint32_t>(r))];
    if (low < 0) low = static_cast<int32_t>(r);
    anchor[r] = low;
  }
  return anchor;
}

// Offsets propagated outwards from the anchors, one ring of ranks per pass:
// a rank next to known ranks takes the median over its collectives of
// (median aligned end of the known members - its own end).
std::vector<double> InitialOffsets(const Problem& p,
                                   const std::vector<int32_t>& anchor) {
  const size_t n = anchor.size();
  std::vector<double> offset(n, 0.0);
  std::vector<uint8_t> known(n, 0);
  for (size_t r = 0; r < n; ++r) known[r] = anchor[r] == static_cast<int>(r);
  std::vector<std::vector<double>> candidates(n);
  std::vector<double> values;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t c = 0; c < p.size(); ++c) {
      values.clear();
      for (uint32_t e = p.begin[c]; e < p.begin[c + 1]; ++e) {
        const auto r = static_cast<size_t>(p.rank[e]);
        if (known[r]) values.push_back(p.rel[e] + offset[r]);
      }
      if (values.empty() || values.size() == p.begin[c + 1] - p.begin[c]) {
        continue;
      }
      const double reference = Median(&values);
      for (uint32_t e = p.begin[c]; e < p.begin[c + 1]; ++e) {
        const auto r = static_cast<size_t>(p.rank[e]);
        if (!known[r]) candidates[r].push_back(reference - p.rel[e]);
      }
    }
    for (size_t r = 0; r < n; ++r) {
      if (candidates[r].empty()) continue;
      offset[r] = Median(&candidates[r]);
      candidates[r].clear();
      known[r] = 1;
      grew = true;
    }
  }
  return offset;
}

// Consensus end (relative to the collective's base) per collective.
std::vector<double> Consensus(const Problem& p,
                              const std::vector<double>& offset) {
  std::vector<double> consensus(p.size());
  std::vector<double> values;
  for (size_t c = 0; c < p.size(); ++c) {
    values.clear();
    for (uint32_t e = p.begin[c]; e < p.begin[c + 1]; ++e) {
      values.push_back(p.rel[e] + offset[static_cast<size_t>(p.rank[e])]);
    }
    consensus[c] = Median(&values);
  }
  return consensus;
}

// One refinement round; returns the largest offset move.
double Refine(const Problem& p, const std::vector<int32_t>& anchor,
              std::vector<double>* offset) {
  const std::vector<double> consensus = Consensus(p, *offset);
  const size_t n = anchor.size();
  std::vector<double> next(n, 0.0), values;
  for (size_t r = 0; r < n; ++r) {
    if (anchor[r] < 0) continue;
    values.clear();
    for (uint32_t e : p.entries_of_rank[r]) {
      values.push_back(consensus[p.collective[e]] - p.rel[e]);
    }
    next[r] = Median(&values);
  }
  double change = 0;
  for (size_t r = 0; r < n; ++r) {
    if (anchor[r] < 0) continue;
    const double v = next[r] - next[static_cast<size_t>(anchor[r])];
    change = std::max(change, std::abs(v - (*offset)[r]));
    (*offset)[r] = v;
  }
  return change;
}

// Max and p99 of |end + offset - consensus| over every entry.
void Residuals(const Problem& p, const std::vector<double>& offset,
               ClockAlignment* out) {
  const std::vector<double> consensus = Consensus(p, offset);
  std::vector<double> residual(p.rank.size());
  for (size_t e = 0; e < p.rank.size(); ++e) {
    residual[e] = std::abs(p.rel[e] + offset[static_cast<size_t>(p.rank[e])] -
                           consensus[p.collective[e]]);
  }
  if (residual.empty()) return;
  const size_t k = static_cast<size_t>(
                       std::ceil(0.99 * static_cast<double>(residual.size()))) -
                   1;
  std::nth_element(residual.begin(),
                   residual.begin() + static_cast<ptrdiff_t>(k),
                   residual.end());
  out->residual_p99_ns = std::llround(residual[k]);
  out->residual_max_ns =
      std::llround(*std::max_element(residual.begin(), residual.end()));
}

}  // namespace

ClockAlignment AlignClocks(size_t num_ranks, const CollectiveEnds& ends,
                           const ClockAlignOptions& options) {
  const Problem p = BuildProblem(num_ranks, ends);
  ClockAlignment out;
  out.anchor = Anchors(p, num_ranks);
  out.collectives = static_cast<int64_t>(p.size());
  out.collectives_of_rank.resize(num_ranks);
  for (size_t r = 0; r < num_ranks; ++r) {
    out.collectives_of_rank[r] =
        static_cast<int64_t>(p.entries_of_rank[r].size());
  }
  std::vector<double> offset = InitialOffsets(p, out.anchor);
  out.converged = false;
  while (out.iterations < options.max_iterations) {
    ++out.iterations;
    out.last_change_ns = Refine(p, out.anchor, &offset);
    if (out.last_change_ns < options.tolerance_ns) {
      out.converged = true;
      break;
    }
  }
  if (p.size() == 0) out.converged = true;
  out.offset_ns.resize(num_ranks);
  for (size_t r = 0; r < num_ranks; ++r) {
    out.offset_ns[r] = std::llround(offset[r]);
  }
  Residuals(p, offset, &out);
  return out;
}

}  // namespace strag::graph
