// SPDX-License-Identifier: Apache-2.0
#include "report/kernel_detail.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace strag::report {
namespace {

using graph::OpTotal;
using graph::SegmentOps;

constexpr double kSecondsPerNs = 1e-9;

double Seconds(int64_t ns) { return kSecondsPerNs * static_cast<double>(ns); }

size_t SegmentsOf(const SegmentOps& ops, size_t r) {
  return ops.first_segment[r + 1] - ops.first_segment[r];
}

int64_t SegmentBusy(const SegmentOps& ops, size_t r, size_t k, size_t s) {
  int64_t sum = 0;
  for (const OpTotal& t : ops.Of(r, k, s)) sum += t.total_ns;
  return sum;
}

int64_t ComputeBusy(const SegmentOps& ops, size_t r, size_t s) {
  int64_t sum = 0;
  for (size_t k = 0; k < SegmentsOf(ops, r); ++k) {
    sum += SegmentBusy(ops, r, k, s);
  }
  return sum;
}

// The lower median of `v` (not empty).
int64_t LowerMedian(std::vector<int64_t> v) {
  const auto mid = v.begin() + static_cast<ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Rank indices of the same stage as `r` with as many compute segments.
std::vector<size_t> PeersOf(const SegmentOps& ops,
                            const std::map<int32_t, int32_t>& stage_of,
                            size_t r) {
  const auto stage = [&](size_t i) {
    const auto it = stage_of.find(ops.ranks[i]);
    return it == stage_of.end() ? -1 : it->second;
  };
  std::vector<size_t> peers;
  for (size_t p = 0; p < ops.ranks.size(); ++p) {
    if (p != r && stage(p) == stage(r) &&
        SegmentsOf(ops, p) == SegmentsOf(ops, r)) {
      peers.push_back(p);
    }
  }
  return peers;
}

// The steps (indices) where r's compute exceeds its peers' median the
// most: up to kKernelDetailSteps with a positive excess, else the largest.
std::vector<size_t> WorstSteps(const SegmentOps& ops, size_t r,
                               const std::vector<size_t>& peers) {
  std::vector<std::pair<int64_t, size_t>> excess;  // (-excess, step)
  for (size_t s = 0; s < ops.steps.size(); ++s) {
    std::vector<int64_t> others;
    for (size_t p : peers) others.push_back(ComputeBusy(ops, p, s));
    excess.emplace_back(LowerMedian(std::move(others)) - ComputeBusy(ops, r, s),
                        s);
  }
  std::sort(excess.begin(), excess.end());
  std::vector<size_t> steps;
  for (const auto& [minus, s] : excess) {
    if (steps.size() == kKernelDetailSteps || (minus >= 0 && !steps.empty())) {
      break;
    }
    steps.push_back(s);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// The peer whose compute over `steps` is the (lower) median of the peers'.
size_t MedianPeer(const SegmentOps& ops, const std::vector<size_t>& peers,
                  const std::vector<size_t>& steps) {
  std::vector<std::pair<int64_t, size_t>> busy;
  for (size_t p : peers) {
    int64_t sum = 0;
    for (size_t s : steps) sum += ComputeBusy(ops, p, s);
    busy.emplace_back(sum, p);
  }
  std::sort(busy.begin(), busy.end());
  return busy[(busy.size() - 1) / 2].second;
}

void SortByExcess(std::vector<OpExcess>* ops) {
  std::stable_sort(ops->begin(), ops->end(),
                   [](const OpExcess& a, const OpExcess& b) {
                     return a.excess_s > b.excess_s;
                   });
}

// Segment k of r against the same segment of m, name by name.
SegmentExcess CompareSegment(const SegmentOps& ops, size_t r, size_t m,
                             size_t k, const std::vector<size_t>& steps) {
  std::map<uint32_t, std::pair<OpTotal, OpTotal>> by_name;  // (r, m)
  for (size_t s : steps) {
    for (const OpTotal& t : ops.Of(r, k, s)) {
      by_name[t.name].first.count += t.count;
      by_name[t.name].first.total_ns += t.total_ns;
    }
    for (const OpTotal& t : ops.Of(m, k, s)) {
      by_name[t.name].second.count += t.count;
      by_name[t.name].second.total_ns += t.total_ns;
    }
  }
  SegmentExcess out{.segment = static_cast<int32_t>(k)};
  for (const auto& [name, pair] : by_name) {
    const auto& [own, median] = pair;
    OpExcess e{.name = ops.names[name],
               .count = own.count,
               .median_count = median.count,
               .total_s = Seconds(own.total_ns),
               .median_total_s = Seconds(median.total_ns),
               .excess_s = Seconds(own.total_ns - median.total_ns)};
    if (median.total_ns > 0) {
      e.ratio = static_cast<double>(own.total_ns) /
                static_cast<double>(median.total_ns);
    }
    out.total_s += e.total_s;
    out.median_total_s += e.median_total_s;
    out.ops.push_back(std::move(e));
  }
  out.excess_s = out.total_s - out.median_total_s;
  SortByExcess(&out.ops);
  return out;
}

// Each name's totals over all `segments`.
std::vector<OpExcess> SumOverSegments(
    const std::vector<SegmentExcess>& segments) {
  std::map<std::string, OpExcess> by_name;
  for (const SegmentExcess& s : segments) {
    for (const OpExcess& op : s.ops) {
      OpExcess& sum = by_name[op.name];
      sum.count += op.count;
      sum.median_count += op.median_count;
      sum.total_s += op.total_s;
      sum.median_total_s += op.median_total_s;
    }
  }
  std::vector<OpExcess> out;
  for (auto& [name, op] : by_name) {
    op.name = name;
    op.excess_s = op.total_s - op.median_total_s;
    op.ratio = op.median_total_s > 0 ? op.total_s / op.median_total_s : 0;
    out.push_back(std::move(op));
  }
  SortByExcess(&out);
  return out;
}

// Keeps the segments with a positive excess (else the largest), by excess.
void KeepExcessSegments(std::vector<SegmentExcess>* segments) {
  std::stable_sort(segments->begin(), segments->end(),
                   [](const SegmentExcess& a, const SegmentExcess& b) {
                     return a.excess_s > b.excess_s;
                   });
  size_t keep = 1;
  while (keep < segments->size() && (*segments)[keep].excess_s > 0) ++keep;
  if (segments->size() > keep) segments->resize(keep);
}

}  // namespace

std::vector<int32_t> RanksToExplain(const diagnose::Diagnosis& diagnosis) {
  std::vector<int32_t> out;
  if (diagnosis.largest_straggler.rank < 0) return out;
  out.push_back(diagnosis.largest_straggler.rank);
  for (const diagnose::Finding& f : diagnosis.findings) {
    if (out.size() == kKernelDetailRanks) break;
    if (!f.ranks.empty() &&
        std::find(out.begin(), out.end(), f.ranks.front()) == out.end()) {
      out.push_back(f.ranks.front());
    }
  }
  return out;
}

std::vector<KernelDetail> ExplainRanks(const graph::SegmentOps& ops,
                                       const trace::Topology& topology,
                                       std::span<const int32_t> ranks) {
  std::map<int32_t, int32_t> stage_of;  // global rank -> PP stage
  for (const trace::RankPlace& p : topology.places) stage_of[p.rank] = p.pp;
  std::vector<KernelDetail> out;
  if (ops.steps.empty()) return out;
  for (int32_t rank : ranks) {
    const int32_t index = ops.RankIndex(rank);
    if (index < 0) continue;
    const auto r = static_cast<size_t>(index);
    const std::vector<size_t> peers = PeersOf(ops, stage_of, r);
    if (peers.empty()) continue;
    const std::vector<size_t> steps = WorstSteps(ops, r, peers);
    const size_t m = MedianPeer(ops, peers, steps);
    KernelDetail d{.rank = rank,
                   .median_rank = ops.ranks[m],
                   .peers = static_cast<int32_t>(peers.size()),
                   .cpu_ops = ops.cpu_ops[r]};
    for (size_t s : steps) d.steps.push_back(ops.steps[s]);
    for (size_t k = 0; k < SegmentsOf(ops, r); ++k) {
      d.segments.push_back(CompareSegment(ops, r, m, k, steps));
      d.excess_s += d.segments.back().excess_s;
    }
    d.ops = SumOverSegments(d.segments);
    KeepExcessSegments(&d.segments);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace strag::report
