// SPDX-License-Identifier: Apache-2.0
#include "report/kernel_detail.h"

#include <algorithm>
#include <map>
#include <string>
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

// The totals of one name (or CPU op) on r and on m.
struct PairTotals {
  int64_t count = 0, median_count = 0;
  int64_t total_ns = 0, median_total_ns = 0;
};

OpExcess MakeExcess(const std::string& name, const PairTotals& p) {
  OpExcess e{.name = name,
             .count = p.count,
             .median_count = p.median_count,
             .total_s = Seconds(p.total_ns),
             .median_total_s = Seconds(p.median_total_ns),
             .excess_s = Seconds(p.total_ns - p.median_total_ns)};
  if (p.median_total_ns > 0) {
    e.ratio = static_cast<double>(p.total_ns) /
              static_cast<double>(p.median_total_ns);
  }
  return e;
}

// A launch_ops key: a CPU op (its name id), or a kernel launched outside
// any (the kernel's name id, after every CPU op).
uint64_t LaunchKey(const OpTotal& t) {
  return t.op != graph::kNoLaunchOp ? t.op : uint64_t{1} << 32 | t.name;
}

// Segment k of r against the same segment of m, name by name, and by the
// CPU op that launched them.
SegmentExcess CompareSegment(const SegmentOps& ops, size_t r, size_t m,
                             size_t k, const std::vector<size_t>& steps) {
  std::map<uint32_t, PairTotals> by_name;
  // Launching op -> kernel name -> totals.
  std::map<uint64_t, std::map<uint32_t, PairTotals>> by_op;
  const auto add = [&](PairTotals* p, const OpTotal& t, bool own) {
    (own ? p->count : p->median_count) += t.count;
    (own ? p->total_ns : p->median_total_ns) += t.total_ns;
  };
  // Kernels are paired by name, under the rank's own launching op: the
  // median's kernel of a name goes under the op that launched it on the
  // rank (the one with the largest total when several did), so that a
  // launching op the two traces name differently (or only one names)
  // does not split one kernel into an excess and a deficit.
  std::map<std::pair<uint32_t, uint64_t>, int64_t> own;  // (name, key)
  for (size_t s : steps) {
    for (const OpTotal& t : ops.Of(r, k, s)) {
      own[{t.name, LaunchKey(t)}] += t.total_ns;
    }
  }
  std::map<uint32_t, std::pair<int64_t, uint64_t>> main_key;  // name -> key
  for (const auto& [name_key, total] : own) {
    auto [it, added] = main_key.emplace(name_key.first,
                                        std::pair(total, name_key.second));
    if (!added && total > it->second.first) {
      it->second = {total, name_key.second};
    }
  }
  for (size_t s : steps) {
    for (const bool mine : {true, false}) {
      for (const OpTotal& t : ops.Of(mine ? r : m, k, s)) {
        add(&by_name[t.name], t, mine);
        uint64_t key = LaunchKey(t);
        if (!mine && own.count({t.name, key}) == 0) {
          const auto it = main_key.find(t.name);
          if (it != main_key.end()) key = it->second.second;
        }
        add(&by_op[key][t.name], t, mine);
      }
    }
  }
  SegmentExcess out{.segment = static_cast<int32_t>(k)};
  for (const auto& [name, pair] : by_name) {
    OpExcess e = MakeExcess(ops.names[name], pair);
    out.total_s += e.total_s;
    out.median_total_s += e.median_total_s;
    out.ops.push_back(std::move(e));
  }
  out.excess_s = out.total_s - out.median_total_s;
  SortByExcess(&out.ops);
  for (const auto& [key, kernels] : by_op) {
    if (key >> 32 != 0) {  // outside any CPU op: one entry per kernel
      out.launch_ops.push_back(
          MakeExcess(ops.names[key & 0xffffffffu], kernels.begin()->second));
      continue;
    }
    PairTotals sum;
    OpExcess e;
    for (const auto& [name, pair] : kernels) {
      sum.count += pair.count;
      sum.median_count += pair.median_count;
      sum.total_ns += pair.total_ns;
      sum.median_total_ns += pair.median_total_ns;
      e.kernels.push_back(MakeExcess(ops.names[name], pair));
    }
    SortByExcess(&e.kernels);
    std::vector<OpExcess> listed = std::move(e.kernels);
    e = MakeExcess(ops.names[key], sum);
    e.kernels = std::move(listed);
    out.launch_ops.push_back(std::move(e));
  }
  SortByExcess(&out.launch_ops);
  return out;
}

// Adds `op` to `sum` (of the same name), its kernels by name.
void Accumulate(const OpExcess& op, OpExcess* sum) {
  sum->count += op.count;
  sum->median_count += op.median_count;
  sum->total_s += op.total_s;
  sum->median_total_s += op.median_total_s;
  for (const OpExcess& k : op.kernels) {
    const auto it =
        std::find_if(sum->kernels.begin(), sum->kernels.end(),
                     [&](const OpExcess& x) { return x.name == k.name; });
    if (it == sum->kernels.end()) {
      sum->kernels.push_back(k);
    } else {
      Accumulate(k, &*it);
    }
  }
}

// Sets excess and ratio of a sum, and of its kernels; sorts them.
void FinishSum(OpExcess* op) {
  op->excess_s = op->total_s - op->median_total_s;
  op->ratio = op->median_total_s > 0 ? op->total_s / op->median_total_s : 0;
  for (OpExcess& k : op->kernels) FinishSum(&k);
  SortByExcess(&op->kernels);
}

// Each name's totals over all `segments` (of `ops`, or of `launch_ops`).
std::vector<OpExcess> SumOverSegments(
    const std::vector<SegmentExcess>& segments,
    std::vector<OpExcess> SegmentExcess::*list) {
  // By (launched outside any CPU op, name): a CPU op and a kernel never
  // merge.
  std::map<std::pair<bool, std::string>, OpExcess> by_name;
  for (const SegmentExcess& s : segments) {
    for (const OpExcess& op : s.*list) {
      OpExcess& sum = by_name[{op.kernels.empty(), op.name}];
      sum.name = op.name;
      Accumulate(op, &sum);
    }
  }
  std::vector<OpExcess> out;
  for (auto& [key, op] : by_name) {
    FinishSum(&op);
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
    d.ops = SumOverSegments(d.segments, &SegmentExcess::ops);
    d.launch_ops = SumOverSegments(d.segments, &SegmentExcess::launch_ops);
    const bool named =
        std::any_of(d.launch_ops.begin(), d.launch_ops.end(),
                    [](const OpExcess& op) { return !op.kernels.empty(); });
    if (!named) {  // no CPU op launched any: `ops` says it all
      d.launch_ops.clear();
      for (SegmentExcess& s : d.segments) s.launch_ops.clear();
    }
    KeepExcessSegments(&d.segments);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace strag::report
