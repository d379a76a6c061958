// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/step_structure.h"

#include <array>

namespace strag::graph {
namespace {

// Group and peer of a comm node as its trace says (-2 for compute).
std::pair<int32_t, int32_t> CommIdentity(const trace::RankTrace& t,
                                         const LocalNode& n) {
  if (n.comm < 0) return {-2, -2};
  const trace::CommOp& op = t.comms[static_cast<size_t>(n.comm)];
  return {op.group, op.peer};
}

bool SameNode(const trace::RankTrace& t, const LocalNode& a,
              const LocalNode& b) {
  return a.type == b.type && a.stream == b.stream && a.position == b.position &&
         CommIdentity(t, a) == CommIdentity(t, b);
}

std::string DescribeNode(const LocalNode& n) {
  return std::string(trace::OpTypeName(n.type)) + " #" + std::to_string(n.seq) +
         " on stream " + std::to_string(n.stream);
}

// "15 nodes (8 compute, 7 all-reduce)".
std::string CountByType(std::span<const LocalNode> nodes) {
  std::array<int64_t, trace::kNumOpTypes> count{};
  for (const LocalNode& n : nodes) ++count[static_cast<size_t>(n.type)];
  std::string out = std::to_string(nodes.size()) + " nodes (";
  bool first = true;
  for (size_t t = 0; t < count.size(); ++t) {
    if (count[t] == 0) continue;
    out += (first ? "" : ", ") + std::to_string(count[t]) + " " +
           std::string(trace::OpTypeName(static_cast<trace::OpType>(t)));
    first = false;
  }
  return out + ")";
}

struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void Add(int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
};

}  // namespace

std::optional<std::string> RankStructureDiff(
    const trace::RankTrace& trace, std::span<const LocalNode> reference,
    std::span<const LocalNode> step) {
  if (reference.size() != step.size()) {
    return CountByType(step) + " instead of " + CountByType(reference);
  }
  for (size_t i = 0; i < step.size(); ++i) {
    if (!SameNode(trace, reference[i], step[i])) {
      return "node " + std::to_string(i) + " is " + DescribeNode(step[i]) +
             " instead of " + DescribeNode(reference[i]);
    }
  }
  return std::nullopt;
}

std::optional<std::string> MatchingDiff(std::span<const MatchedComm> reference,
                                        std::span<const MatchedComm> step) {
  for (size_t i = 0; i < std::max(reference.size(), step.size()); ++i) {
    if (i >= reference.size()) return step[i].what;
    if (i >= step.size() || reference[i].members != step[i].members) {
      return reference[i].what;
    }
  }
  return std::nullopt;
}

uint64_t StructureHash(std::span<const trace::RankTrace* const> traces,
                       std::span<const std::vector<LocalNode>> nodes,
                       std::span<const MatchedComm> matching) {
  Fnv f;
  for (size_t r = 0; r < nodes.size(); ++r) {
    f.Add(static_cast<int64_t>(nodes[r].size()));
    for (const LocalNode& n : nodes[r]) {
      const auto [group, peer] = CommIdentity(*traces[r], n);
      f.Add(static_cast<int64_t>(n.type));
      f.Add(n.stream);
      f.Add(n.position);
      f.Add(group);
      f.Add(peer);
    }
  }
  for (const MatchedComm& m : matching) {
    f.Add(static_cast<int64_t>(m.members.size()));
    for (const auto& [r, v] : m.members) f.Add((int64_t{r} << 32) | v);
  }
  return f.h;
}

}  // namespace strag::graph
