// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/rank_edges.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace strag::graph {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr int64_t kHostCompletionLagNs = 2'000'000;
using Streams = std::map<int32_t, std::vector<uint32_t>>;

bool IsComputeNode(const LocalNode& n) {
  return n.type == trace::OpType::kCompute;
}

// Chains every stream in start order; returns each node's predecessor.
std::vector<uint32_t> StreamEdges(std::span<const LocalNode> nodes,
                                  std::vector<LocalEdge>* out) {
  Streams streams;
  for (uint32_t v = 0; v < nodes.size(); ++v) {
    streams[nodes[v].stream].push_back(v);
  }
  std::vector<uint32_t> pred(nodes.size(), kNone);
  for (auto& [stream, list] : streams) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(nodes[a].start_ns, nodes[a].position) <
             std::tie(nodes[b].start_ns, nodes[b].position);
    });
    for (size_t i = 1; i < list.size(); ++i) {
      pred[list[i]] = list[i - 1];
      out->push_back({list[i - 1], list[i], EdgeKind::kStream});
    }
  }
  return pred;
}

// True when host-thread segment `u` was running when `c` was launched.
bool Issued(const LocalNode& u, const LocalNode& c) {
  return u.host_thread && c.launch_ns >= 0 && u.start_ns <= c.launch_ns &&
         c.launch_ns <= u.end_ns;
}

// Compute -> comm: per other stream, the latest segment launched before the
// comm node that had ended when it started (or, on a host thread, that
// issued it). Returns, per node, the latest end of the segments it so
// depends on (INT64_MIN for none).
std::vector<int64_t> LaunchEdges(std::span<const LocalNode> nodes,
                                 std::vector<LocalEdge>* out) {
  std::vector<int64_t> launch_pred_end(nodes.size(),
                                       std::numeric_limits<int64_t>::min());
  Streams computes;  // per stream, segments in position order
  for (uint32_t v = 0; v < nodes.size(); ++v) {
    if (IsComputeNode(nodes[v])) computes[nodes[v].stream].push_back(v);
  }
  for (uint32_t c = 0; c < nodes.size(); ++c) {
    if (IsComputeNode(nodes[c])) continue;
    for (const auto& [stream, list] : computes) {
      if (stream == nodes[c].stream) continue;
      auto it = std::lower_bound(list.begin(), list.end(), nodes[c].position,
                                 [&](uint32_t v, int32_t position) {
                                   return nodes[v].position < position;
                                 });
      while (it != list.begin()) {
        --it;
        const LocalNode& u = nodes[*it];
        if (u.end_ns <= nodes[c].start_ns) {
          out->push_back({*it, c, EdgeKind::kLaunch});
          launch_pred_end[c] = std::max(launch_pred_end[c], u.end_ns);
          break;
        }
        if (Issued(u, nodes[c])) {
          out->push_back({*it, c, EdgeKind::kIssue});
          break;
        }
      }
    }
  }
  return launch_pred_end;
}

// Comm -> compute and comm -> comm: a node that waited depends on the comm
// node that ended last within its wait, among those launched before it. A
// start explained by its launch, its stream's previous node or a segment
// of another stream it is already linked to (`launch_pred_end`) was no
// wait: a comm that merely ended earlier in the gap (another pipeline
// receive, say) is no dependency, and taking it made an edge that held in
// some steps only.
void WaitEdges(std::span<const LocalNode> nodes,
               const std::vector<uint32_t>& pred,
               const std::vector<int64_t>& launch_pred_end,
               int64_t tolerance_ns, std::vector<LocalEdge>* out) {
  std::vector<uint32_t> by_end;  // what a node may have waited for
  for (uint32_t v = 0; v < nodes.size(); ++v) {
    if (!IsComputeNode(nodes[v]) && !nodes[v].async_post) by_end.push_back(v);
  }
  std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(nodes[a].end_ns, nodes[a].position) <
           std::tie(nodes[b].end_ns, nodes[b].position);
  });
  for (uint32_t v = 0; v < nodes.size(); ++v) {
    const LocalNode& n = nodes[v];
    if (pred[v] == kNone && n.launch_ns < 0) continue;
    // A comm op waited only if it is known to have been launched earlier.
    if (!IsComputeNode(n) && n.launch_ns < 0) continue;
    int64_t explained = std::numeric_limits<int64_t>::min();
    if (n.launch_ns >= 0) explained = n.launch_ns;
    if (pred[v] != kNone) {
      explained = std::max(explained, nodes[pred[v]].end_ns);
    }
    explained = std::max(explained, launch_pred_end[v]);
    if (n.start_ns - explained <= tolerance_ns) continue;
    // A host thread resumes when the collective completes, which its
    // worker thread records a little later (gloo: up to ~1 ms).
    const int64_t lag = n.host_thread ? kHostCompletionLagNs : 0;
    auto it = std::upper_bound(
        by_end.begin(), by_end.end(), n.start_ns + lag,
        [&](int64_t t, uint32_t c) { return t < nodes[c].end_ns; });
    while (it != by_end.begin() && nodes[*std::prev(it)].end_ns > explained) {
      --it;
      if (nodes[*it].position < n.position) {
        out->push_back({*it, v, EdgeKind::kWait});
        break;
      }
    }
  }
}

}  // namespace

std::vector<LocalEdge> BuildRankEdges(std::span<const LocalNode> nodes,
                                      int64_t wait_tolerance_ns) {
  std::vector<LocalEdge> edges;
  const std::vector<uint32_t> pred = StreamEdges(nodes, &edges);
  const std::vector<int64_t> launch_pred_end = LaunchEdges(nodes, &edges);
  WaitEdges(nodes, pred, launch_pred_end, wait_tolerance_ns, &edges);
  return edges;
}

}  // namespace strag::graph
