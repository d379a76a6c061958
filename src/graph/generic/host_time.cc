// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/host_time.h"

#include <algorithm>
#include <map>
#include <utility>

namespace strag::graph {
namespace {

// Total length of the union of `spans` clipped to [lo, hi).
int64_t CoveredNs(std::vector<std::pair<int64_t, int64_t>> spans, int64_t lo,
                  int64_t hi) {
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, reach = lo;
  for (auto [a, b] : spans) {
    a = std::max(a, reach);
    b = std::min(b, hi);
    if (b <= a) continue;
    total += b - a;
    reach = b;
  }
  return total;
}

}  // namespace

HostTime MeasureHostTime(std::span<const trace::RankTrace> traces,
                         const GenericModel& m) {
  HostTime out;
  const size_t steps = m.steps.size();
  // A kind is measured only when some trace names it.
  bool loading_named = false, gc_named = false;
  for (const trace::RankTrace& t : traces) {
    for (const trace::HostSpan& h : t.host_spans) {
      (h.kind == trace::HostKind::kGc ? gc_named : loading_named) = true;
    }
  }
  if (steps == 0) return out;
  if (loading_named) out.data_loading_ns.assign(m.ranks.size() * steps, 0);
  if (gc_named) out.gc_ns.assign(m.ranks.size() * steps, 0);
  std::map<int32_t, size_t> index;
  for (size_t i = 0; i < m.ranks.size(); ++i) index[m.ranks[i]] = i;
  for (const trace::RankTrace& t : traces) {
    const auto it = index.find(t.rank);
    if (it == index.end() || t.host_spans.empty()) continue;
    std::vector<std::pair<int64_t, int64_t>> loading, gc;
    for (const trace::HostSpan& h : t.host_spans) {
      (h.kind == trace::HostKind::kGc ? gc : loading)
          .emplace_back(h.start_ns, h.end_ns);
    }
    for (const trace::StepSpan& span : t.steps) {
      const auto s = std::lower_bound(m.steps.begin(), m.steps.end(), span.id);
      if (s == m.steps.end() || *s != span.id) continue;
      const size_t slot =
          it->second * steps + static_cast<size_t>(s - m.steps.begin());
      if (loading_named) {
        out.data_loading_ns[slot] =
            CoveredNs(loading, span.start_ns, span.end_ns);
      }
      if (gc_named) out.gc_ns[slot] = CoveredNs(gc, span.start_ns, span.end_ns);
    }
  }
  return out;
}

}  // namespace strag::graph
