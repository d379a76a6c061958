// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/segment_ops.h"

#include <algorithm>
#include <climits>
#include <utility>

namespace strag::graph {

int32_t SegmentOps::RankIndex(int32_t rank) const {
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end() || *it != rank) return -1;
  return static_cast<int32_t>(it - ranks.begin());
}

int32_t SegmentOps::StepIndex(int64_t step) const {
  const auto it = std::lower_bound(steps.begin(), steps.end(), step);
  if (it == steps.end() || *it != step) return -1;
  return static_cast<int32_t>(it - steps.begin());
}

std::span<const OpTotal> SegmentOps::Of(size_t r, size_t k, size_t s) const {
  if (r + 1 >= first_segment.size() || s >= steps.size()) return {};
  if (k >= first_segment[r + 1] - first_segment[r]) return {};
  const size_t i = s * num_segments() + first_segment[r] + k;
  if (i + 1 >= offsets.size()) return {};
  return std::span<const OpTotal>(totals).subspan(offsets[i],
                                                  offsets[i + 1] - offsets[i]);
}

LocalSegmentOps SumSegmentOps(const trace::RankTrace& trace,
                              std::span<const uint32_t> rows,
                              const std::vector<LocalNode>& nodes,
                              const std::vector<uint32_t>& node_of_row) {
  // Compute nodes numbered by their seq; (seq, name, op) keys sorted, then
  // summed run by run: O(ops log ops), as the segments' own launch order.
  struct Keyed {
    uint64_t seq_name;  // seq << 32 | name
    uint32_t op;
    int64_t dur_ns;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(rows.size());
  int32_t segments = 0;
  for (const LocalNode& n : nodes) {
    segments += n.type == trace::OpType::kCompute;
  }
  for (size_t i = 0; i < rows.size() && i < node_of_row.size(); ++i) {
    const LocalNode& n = nodes[node_of_row[i]];
    if (n.type != trace::OpType::kCompute) continue;
    const uint32_t row = rows[i];
    keyed.push_back(
        {uint64_t{static_cast<uint32_t>(n.seq)} << 32 | trace.name[row],
         trace.LaunchOp(row), trace.dur_ns[row]});
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    return a.seq_name != b.seq_name ? a.seq_name < b.seq_name : a.op < b.op;
  });
  LocalSegmentOps out;
  int32_t seq = 0;
  for (size_t i = 0; i < keyed.size();) {
    const uint64_t key = keyed[i].seq_name;
    const uint32_t op = keyed[i].op;
    const auto this_seq = static_cast<int32_t>(key >> 32);
    for (; seq < this_seq; ++seq) {
      out.offsets.push_back(static_cast<uint32_t>(out.totals.size()));
    }
    OpTotal t{.name = static_cast<uint32_t>(key & 0xffffffffu), .op = op};
    for (; i < keyed.size() && keyed[i].seq_name == key && keyed[i].op == op;
         ++i) {
      ++t.count;
      t.total_ns += keyed[i].dur_ns;
    }
    out.totals.push_back(t);
  }
  for (; seq < segments; ++seq) {
    out.offsets.push_back(static_cast<uint32_t>(out.totals.size()));
  }
  return out;
}

void SegmentOpsBuilder::AddRank(const trace::RankTrace& trace,
                                uint32_t segments) {
  traces_.push_back(&trace);
  global_.emplace_back(trace.names.size(), UINT32_MAX);
  out_.ranks.push_back(trace.rank);
  out_.cpu_ops.push_back(trace.cpu_only);
  out_.first_segment.push_back(out_.first_segment.back() + segments);
}

uint32_t SegmentOpsBuilder::Intern(size_t rank_index, uint32_t local) {
  std::vector<uint32_t>& map = global_[rank_index];
  if (local >= map.size()) map.resize(local + 1, UINT32_MAX);
  if (map[local] != UINT32_MAX) return map[local];
  const trace::RankTrace& t = *traces_[rank_index];
  const std::string_view name =
      local < t.names.size() ? std::string_view(t.names[local]) : "?";
  auto [it, inserted] =
      ids_.emplace(name, static_cast<uint32_t>(out_.names.size()));
  if (inserted) out_.names.emplace_back(name);
  return map[local] = it->second;
}

void SegmentOpsBuilder::Add(size_t rank_index, int64_t step,
                            const LocalSegmentOps& local) {
  if (out_.steps.empty() || out_.steps.back() != step) {
    out_.steps.push_back(step);
  }
  const uint32_t segments =
      out_.first_segment[rank_index + 1] - out_.first_segment[rank_index];
  for (uint32_t k = 0; k < segments; ++k) {
    const size_t begin = out_.totals.size();
    if (k + 1 < local.offsets.size()) {
      for (uint32_t i = local.offsets[k]; i < local.offsets[k + 1]; ++i) {
        OpTotal t = local.totals[i];
        t.name = Intern(rank_index, t.name);
        if (t.op != kNoLaunchOp) t.op = Intern(rank_index, t.op);
        out_.totals.push_back(t);
      }
    }
    // Sorted by global ids, so that two ranks' segments merge in one pass.
    std::sort(out_.totals.begin() + static_cast<ptrdiff_t>(begin),
              out_.totals.end(), [](const OpTotal& a, const OpTotal& b) {
                return a.name != b.name ? a.name < b.name : a.op < b.op;
              });
    out_.offsets.push_back(out_.totals.size());
  }
}

}  // namespace strag::graph
