// SPDX-License-Identifier: Apache-2.0
#include "base/partition.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <utility>

#include "base/check.h"

namespace strag {
namespace {

// Items ordered by cost, descending, ties by index (deterministic).
std::vector<int32_t> ByCostDescending(std::span<const double> cost) {
  std::vector<int32_t> order(cost.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return cost[static_cast<size_t>(a)] > cost[static_cast<size_t>(b)];
  });
  return order;
}

void Finish(std::span<const double> cost, int32_t k, Partition* p) {
  p->load.assign(static_cast<size_t>(k), 0.0);
  double total = 0, largest = 0;
  for (size_t i = 0; i < cost.size(); ++i) {
    p->load[static_cast<size_t>(p->bin[i])] += cost[i];
    total += cost[i];
    largest = std::max(largest, cost[i]);
  }
  p->makespan = *std::max_element(p->load.begin(), p->load.end());
  p->lower_bound = std::max(total / k, largest);
}

}  // namespace

Partition LptPartition(std::span<const double> cost, int32_t k) {
  STRAG_CHECK(k >= 1, "LPT needs at least one bin");
  Partition p;
  p.bin.assign(cost.size(), 0);
  // (load, bin): the least loaded first, ties to the lower bin.
  using Entry = std::pair<double, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> bins;
  for (int32_t b = 0; b < k; ++b) bins.emplace(0.0, b);
  for (int32_t i : ByCostDescending(cost)) {
    auto [load, b] = bins.top();
    bins.pop();
    p.bin[static_cast<size_t>(i)] = b;
    bins.emplace(load + cost[static_cast<size_t>(i)], b);
  }
  Finish(cost, k, &p);
  return p;
}

Partition KarmarkarKarp(std::span<const double> cost, int32_t k) {
  STRAG_CHECK(k >= 1, "KK needs at least one subset");
  const auto kk = static_cast<size_t>(k);
  // A state: k subsets (sum, items), sorted by sum descending.
  struct Subset {
    double sum = 0;
    std::vector<int32_t> items;
  };
  using State = std::vector<Subset>;
  std::vector<State> states;
  states.reserve(cost.size());
  for (int32_t i : ByCostDescending(cost)) {
    State s(kk);
    s[0].sum = cost[static_cast<size_t>(i)];
    s[0].items.push_back(i);
    states.push_back(std::move(s));
  }
  auto spread = [](const State& s) { return s.front().sum - s.back().sum; };
  // Max-heap on spread; ties by creation order (index) for determinism.
  using Entry = std::pair<double, size_t>;
  auto later = [](const Entry& a, const Entry& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second > b.second;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> heap(later);
  for (size_t i = 0; i < states.size(); ++i) heap.emplace(spread(states[i]), i);
  while (heap.size() > 1) {
    const size_t a = heap.top().second;
    heap.pop();
    const size_t b = heap.top().second;
    heap.pop();
    State merged(kk);
    for (size_t j = 0; j < kk; ++j) {
      Subset& x = states[a][j];
      Subset& y = states[b][kk - 1 - j];
      merged[j].sum = x.sum + y.sum;
      merged[j].items = std::move(x.items);
      merged[j].items.insert(merged[j].items.end(), y.items.begin(),
                             y.items.end());
    }
    std::stable_sort(
        merged.begin(), merged.end(),
        [](const Subset& x, const Subset& y) { return x.sum > y.sum; });
    states[a].clear();
    states[b].clear();
    states.push_back(std::move(merged));
    heap.emplace(spread(states.back()), states.size() - 1);
  }
  Partition p;
  p.bin.assign(cost.size(), 0);
  if (!heap.empty()) {
    const State& last = states[heap.top().second];
    for (size_t j = 0; j < kk; ++j) {
      for (int32_t i : last[j].items) {
        p.bin[static_cast<size_t>(i)] = static_cast<int32_t>(j);
      }
    }
  }
  Finish(cost, k, &p);
  return p;
}

Partition LptWithCap(std::span<const double> cost, std::span<const double> size,
                     int32_t k, double cap, int64_t* overflow) {
  STRAG_CHECK(k >= 1 && cost.size() == size.size(),
              "LPT with a cap needs bins and a size per item");
  const auto kk = static_cast<size_t>(k);
  Partition p;
  p.bin.assign(cost.size(), 0);
  std::vector<double> load(kk, 0.0), used(kk, 0.0);
  for (int32_t i : ByCostDescending(cost)) {
    const auto item = static_cast<size_t>(i);
    size_t best = kk;
    for (size_t b = 0; b < kk; ++b) {
      if (used[b] + size[item] > cap) continue;
      if (best == kk || load[b] < load[best]) best = b;
    }
    if (best == kk) {
      best = static_cast<size_t>(std::min_element(used.begin(), used.end()) -
                                 used.begin());
      if (overflow) ++*overflow;
    }
    p.bin[item] = static_cast<int32_t>(best);
    load[best] += cost[item];
    used[best] += size[item];
  }
  Finish(cost, k, &p);
  return p;
}

Partition BestPartition(std::span<const double> cost, int32_t k) {
  Partition lpt = LptPartition(cost, k);
  if (static_cast<double>(cost.size()) * k > kMaxKkCells) return lpt;
  Partition kk = KarmarkarKarp(cost, k);
  return lpt.makespan < kk.makespan ? lpt : kk;
}

namespace {

// Fills parts from the last item backwards, each up to `bound`, keeping at
// least one item for every part still to fill. Returns the items per part,
// or an empty vector when `bound` is not feasible.
std::vector<int32_t> ProbeBackward(std::span<const double> items, int32_t parts,
                                   double bound) {
  std::vector<int32_t> count(static_cast<size_t>(parts), 0);
  // Sums in another order than the bound's may differ in the last bits.
  bound += 1e-12 * bound;
  auto i = static_cast<int64_t>(items.size()) - 1;
  for (int32_t part = parts - 1; part >= 0; --part) {
    double sum = 0;
    // Items that must stay for the parts before this one.
    const int64_t keep = part;
    while (i >= keep && (count[static_cast<size_t>(part)] == 0 ||
                         sum + items[static_cast<size_t>(i)] <= bound)) {
      if (items[static_cast<size_t>(i)] > bound) return {};
      sum += items[static_cast<size_t>(i)];
      ++count[static_cast<size_t>(part)];
      --i;
    }
  }
  if (i >= 0) return {};
  return count;
}

}  // namespace

std::vector<int32_t> MinMaxContiguous(std::span<const double> items,
                                      int32_t parts) {
  STRAG_CHECK(parts >= 1 && items.size() >= static_cast<size_t>(parts),
              "a contiguous partition needs at least one item per part");
  double total = 0, largest = 0;
  for (double w : items) {
    total += w;
    largest = std::max(largest, w);
  }
  double lo = std::max(largest, total / parts), hi = total;
  std::vector<int32_t> best = ProbeBackward(items, parts, hi);
  if (!ProbeBackward(items, parts, lo).empty()) {
    return ProbeBackward(items, parts, lo);
  }
  for (int iter = 0; iter < 200 && hi - lo > 1e-13 * hi; ++iter) {
    const double mid = 0.5 * (lo + hi);
    std::vector<int32_t> probe = ProbeBackward(items, parts, mid);
    if (probe.empty()) {
      lo = mid;
    } else {
      hi = mid;
      best = std::move(probe);
    }
  }
  return best;
}

std::vector<int32_t> GreedyUnits(std::span<const double> unit_time,
                                 int64_t units, double offset) {
  const size_t n = unit_time.size();
  STRAG_CHECK(n >= 1 && units >= static_cast<int64_t>(n),
              "every worker needs at least one unit");
  std::vector<int32_t> count(n, 1);
  // (time after one more unit, worker): the least first, ties by index.
  using Entry = std::pair<double, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> next;
  for (size_t i = 0; i < n; ++i) next.emplace((2 + offset) * unit_time[i], i);
  for (int64_t u = static_cast<int64_t>(n); u < units; ++u) {
    const size_t i = next.top().second;
    next.pop();
    ++count[i];
    next.emplace((count[i] + 1 + offset) * unit_time[i], i);
  }
  return count;
}

std::vector<std::vector<int32_t>> RepackSequences(
    const std::vector<std::vector<int32_t>>& lengths, int32_t replicas,
    int32_t microbatches, double a, double b, double cap, bool across_replicas,
    double* gap, int64_t* overflow) {
  const auto r_count = static_cast<size_t>(replicas);
  const auto m = static_cast<size_t>(microbatches);
  STRAG_CHECK(lengths.size() == r_count * m,
              "one list of lengths per replica and microbatch");
  auto cost_of = [&](int32_t s) {
    const auto x = static_cast<double>(s);
    return a * x + b * x * x;
  };
  // Each replica's sequences, after the split across replicas.
  std::vector<std::vector<int32_t>> of_replica(r_count);
  if (across_replicas) {
    std::vector<int32_t> all;
    std::vector<double> cost;
    for (const std::vector<int32_t>& mb : lengths) {
      for (int32_t s : mb) {
        all.push_back(s);
        cost.push_back(cost_of(s));
      }
    }
    const Partition split = BestPartition(cost, replicas);
    if (gap) *gap = split.Gap();
    for (size_t i = 0; i < all.size(); ++i) {
      of_replica[static_cast<size_t>(split.bin[i])].push_back(all[i]);
    }
  } else {
    for (size_t r = 0; r < r_count; ++r) {
      for (size_t mb = 0; mb < m; ++mb) {
        const std::vector<int32_t>& l = lengths[r * m + mb];
        of_replica[r].insert(of_replica[r].end(), l.begin(), l.end());
      }
    }
    if (gap) *gap = 0;
  }
  std::vector<std::vector<int32_t>> out(r_count * m);
  std::vector<double> cost, size;
  for (size_t r = 0; r < r_count; ++r) {
    cost.clear();
    size.clear();
    for (int32_t s : of_replica[r]) {
      cost.push_back(cost_of(s));
      size.push_back(static_cast<double>(s));
    }
    const Partition pack = LptWithCap(cost, size, microbatches, cap, overflow);
    for (size_t i = 0; i < of_replica[r].size(); ++i) {
      out[r * m + static_cast<size_t>(pack.bin[i])].push_back(of_replica[r][i]);
    }
  }
  return out;
}

}  // namespace strag
