// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/input_size.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "base/median.h"

namespace strag::graph {
namespace {

// An input position of an op name, across ranks (names are per trace).
using Key = std::pair<std::string, uint32_t>;

}  // namespace

InputSize MeasureInputSize(std::span<const trace::RankTrace> traces,
                           const GenericModel& m) {
  InputSize out;
  const size_t steps = m.steps.size();
  const size_t slots = m.ranks.size() * steps;
  if (slots == 0) return out;
  std::map<int32_t, size_t> index;
  for (size_t i = 0; i < m.ranks.size(); ++i) index[m.ranks[i]] = i;
  // Per key: the sum per slot, and how many slots saw it.
  std::map<Key, std::vector<double>> sums;
  for (const trace::RankTrace& t : traces) {
    const auto it = index.find(t.rank);
    if (it == index.end() || t.input_shapes.empty()) continue;
    // The rank's kept steps, by start, to place each op in its step.
    std::vector<std::pair<trace::StepSpan, size_t>> kept;
    for (const trace::StepSpan& span : t.steps) {
      const auto s = std::lower_bound(m.steps.begin(), m.steps.end(), span.id);
      if (s == m.steps.end() || *s != span.id) continue;
      kept.emplace_back(span, it->second * steps +
                                  static_cast<size_t>(s - m.steps.begin()));
    }
    std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
      return a.first.start_ns < b.first.start_ns;
    });
    for (const trace::InputShape& shape : t.input_shapes) {
      auto at = std::upper_bound(
          kept.begin(), kept.end(), shape.start_ns,
          [](int64_t ts, const auto& k) { return ts < k.first.start_ns; });
      if (at == kept.begin()) continue;
      --at;
      if (shape.start_ns >= at->first.end_ns) continue;
      const std::string& name = t.names[shape.name];
      for (uint32_t p = 0; p < shape.count; ++p) {
        const int64_t numel = t.input_numels[shape.first + p];
        if (numel <= 0) continue;
        std::vector<double>& v = sums[{name, p}];
        if (v.empty()) v.assign(slots, 0);
        v[at->second] += static_cast<double>(numel);
      }
    }
  }
  double best = 0;
  for (auto& [key, v] : sums) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (*lo <= 0 || *hi <= *lo * 1.001) continue;  // absent somewhere, fixed
    std::vector<double> copy = v;
    const double median = Median(&copy);
    if (out.per_step.empty() || median < best) {
      best = median;
      out.per_step = v;
      out.source = key.first + " input " + std::to_string(key.second + 1);
    }
  }
  return out;
}

}  // namespace strag::graph
