// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/segments.h"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <numeric>
#include <tuple>

#include "graph/generic/step_split.h"

namespace strag::graph {
namespace {

// A comm op that starts this long after its launch waited for something.
constexpr int64_t kCutToleranceNs = 2000;

// Launch order (as indices into `rows`): by launch (start when unknown),
// then stream, start, row, so that ties break the same way every time.
std::vector<uint32_t> LaunchOrder(const trace::RankTrace& t,
                                  std::span<const uint32_t> rows) {
  std::vector<uint32_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&t, rows](uint32_t i, uint32_t j) {
    const uint32_t a = rows[i], b = rows[j];
    return std::make_tuple(StepKey(t, a), t.stream[a], t.start_ns[a], a) <
           std::make_tuple(StepKey(t, b), t.stream[b], t.start_ns[b], b);
  });
  return order;
}

LocalNode CommNode(const trace::RankTrace& t, uint32_t row, int32_t k) {
  LocalNode n;
  n.type = CommKind(t.comms[static_cast<size_t>(t.comm[row])]);
  // gloo (CPU traces) runs a rank's collectives on a pool of worker threads,
  // whichever is free, and they may overlap: the thread means nothing, so
  // each comm point gets a logical stream of its own (the same in every
  // step), ordered only by the segments that issue it.
  n.stream = t.cpu_only ? kCpuCommStream - k : t.stream[row];
  n.position = 2 * k + 1;
  n.start_ns = t.start_ns[row];
  n.end_ns = t.start_ns[row] + t.dur_ns[row];
  n.busy_ns = t.dur_ns[row];
  n.launch_ns = t.launch_ns[row];
  n.comm = t.comm[row];
  n.async_post = t.comms[static_cast<size_t>(t.comm[row])].async_post;
  n.num_ops = 1;
  return n;
}

// Adds op `row` to the compute segment `n` (empty when num_ops == 0).
void Merge(const trace::RankTrace& t, uint32_t row, LocalNode* n) {
  const int64_t start = t.start_ns[row], end = start + t.dur_ns[row];
  if (n->num_ops == 0 || start < n->start_ns) {
    n->start_ns = start;
    n->launch_ns = t.launch_ns[row];
  }
  n->end_ns = n->num_ops == 0 ? end : std::max(n->end_ns, end);
  // Overlapping ops (not expected on one stream) count once at most.
  n->busy_ns = std::min(n->busy_ns + t.dur_ns[row], n->end_ns - n->start_ns);
  ++n->num_ops;
}

void NumberByType(std::vector<LocalNode>* nodes) {
  std::array<int32_t, trace::kNumOpTypes> count{};
  for (LocalNode& n : *nodes) n.seq = count[static_cast<size_t>(n.type)]++;
}

}  // namespace

trace::OpType CommKind(const trace::CommOp& op) {
  if (trace::IsGeneric(op.kind) && op.kind != trace::OpType::kCompute) {
    return op.kind;
  }
  return trace::OpType::kOtherComm;
}

// A comm op that waited after its launch (GPU traces, where the host runs
// ahead).
struct WaitedStart {
  int64_t start_ns;
  int32_t stream;
  int64_t launch_ns;
  auto operator<=>(const WaitedStart&) const = default;
};

// The comm ops that waited after their launch, by start: a compute segment
// that ends at one of them is what that op waited for, so the segment is
// cut there.
std::vector<WaitedStart> WaitedStarts(const trace::RankTrace& t,
                                      std::span<const uint32_t> rows) {
  std::vector<WaitedStart> out;
  for (uint32_t row : rows) {
    if (t.comm[row] < 0 || t.launch_ns[row] < 0 || t.cpu_only) continue;
    if (t.start_ns[row] - t.launch_ns[row] > kCutToleranceNs) {
      out.push_back({t.start_ns[row], t.stream[row], t.launch_ns[row]});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// True when a comm op of another stream than `stream`, launched after the
// segment's last op (`last_launch`, -1 when unknown), started within the
// tolerance of `end` (and no later than `next_start`): it waited for the
// work that ended there. An op launched before that work cannot have waited
// for it (a stream waits only on what was issued before the wait), however
// close its start: a comm op queued behind its own stream's previous one
// that happens to start as a short kernel ends is no cut.
bool WaitedFor(const std::vector<WaitedStart>& waited, int64_t end,
               int64_t next_start, int32_t stream, int64_t last_launch) {
  auto it = std::lower_bound(
      waited.begin(), waited.end(),
      WaitedStart{end - kCutToleranceNs, INT32_MIN, INT64_MIN});
  for (; it != waited.end() && it->start_ns <= end + kCutToleranceNs; ++it) {
    if (it->stream != stream && it->launch_ns > last_launch &&
        it->start_ns <= next_start + kCutToleranceNs) {
      return true;
    }
  }
  return false;
}

std::vector<LocalNode> BuildLocalNodes(const trace::RankTrace& trace,
                                       std::span<const uint32_t> rows,
                                       std::vector<uint32_t>* node_of_row) {
  std::vector<LocalNode> nodes;
  std::map<int32_t, size_t> open;  // stream -> its segment in this interval
  std::vector<int64_t> last_launch;  // per node: its last op's launch
  int32_t comm_points = 0;
  const auto waited = WaitedStarts(trace, rows);
  if (node_of_row != nullptr) node_of_row->assign(rows.size(), 0);
  for (uint32_t i : LaunchOrder(trace, rows)) {
    const uint32_t row = rows[i];
    if (trace.comm[row] >= 0) {
      if (node_of_row != nullptr) {
        (*node_of_row)[i] = static_cast<uint32_t>(nodes.size());
      }
      nodes.push_back(CommNode(trace, row, comm_points++));
      last_launch.push_back(trace.launch_ns[row]);
      open.clear();
      continue;
    }
    auto found = open.find(trace.stream[row]);
    if (found != open.end() &&
        WaitedFor(waited, nodes[found->second].end_ns, trace.start_ns[row],
                  trace.stream[row], last_launch[found->second])) {
      open.erase(found);  // a comm op waited for the segment as it is
    }
    auto [it, inserted] = open.emplace(trace.stream[row], nodes.size());
    if (inserted) {
      LocalNode segment;
      segment.stream = trace.stream[row];
      segment.host_thread = trace.cpu_only;
      segment.position = 2 * comm_points;
      nodes.push_back(segment);
      last_launch.push_back(-1);
    }
    Merge(trace, row, &nodes[it->second]);
    // Rows come in launch order: the latest launch is the last row's.
    last_launch[it->second] = trace.launch_ns[row];
    if (node_of_row != nullptr) {
      (*node_of_row)[i] = static_cast<uint32_t>(it->second);
    }
  }
  std::vector<uint32_t> order(nodes.size());  // sorted -> built index
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&nodes](uint32_t a, uint32_t b) {
                     return std::tie(nodes[a].position, nodes[a].stream) <
                            std::tie(nodes[b].position, nodes[b].stream);
                   });
  std::vector<LocalNode> sorted;
  sorted.reserve(nodes.size());
  std::vector<uint32_t> sorted_index(nodes.size());
  for (uint32_t k : order) {
    sorted_index[k] = static_cast<uint32_t>(sorted.size());
    sorted.push_back(nodes[k]);
  }
  if (node_of_row != nullptr) {
    for (uint32_t& v : *node_of_row) v = sorted_index[v];
  }
  NumberByType(&sorted);
  return sorted;
}

}  // namespace strag::graph
