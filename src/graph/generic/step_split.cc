// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/step_split.h"

#include <algorithm>
#include <unordered_set>

namespace strag::graph {
namespace {

bool Usable(const trace::RankTrace& t, size_t row) {
  if (t.dur_ns[row] < 0) return false;
  const int32_t comm = t.comm[row];
  return comm >= -1 && (comm < 0 || static_cast<size_t>(comm) < t.comms.size());
}

}  // namespace

RankSteps SplitSteps(const trace::RankTrace& trace) {
  RankSteps out;
  std::unordered_set<int64_t> ids;
  for (const trace::StepSpan& s : trace.steps) {
    if (!ids.insert(s.id).second) {
      ++out.duplicate_spans;
      continue;
    }
    out.spans.push_back(s);
  }
  std::stable_sort(out.spans.begin(), out.spans.end(),
                   [](const trace::StepSpan& a, const trace::StepSpan& b) {
                     return a.start_ns < b.start_ns;
                   });
  out.rows.resize(out.spans.size());
  for (size_t row = 0; row < trace.size(); ++row) {
    if (!Usable(trace, row)) {
      ++out.invalid;
      continue;
    }
    const int64_t key = StepKey(trace, row);
    // The last span starting at or before `key`.
    auto it = std::upper_bound(
        out.spans.begin(), out.spans.end(), key,
        [](int64_t k, const trace::StepSpan& s) { return k < s.start_ns; });
    if (it == out.spans.begin() || key > std::prev(it)->end_ns) {
      ++out.outside;
      continue;
    }
    const auto step = static_cast<size_t>(std::prev(it) - out.spans.begin());
    out.rows[step].push_back(static_cast<uint32_t>(row));
  }
  return out;
}

}  // namespace strag::graph
