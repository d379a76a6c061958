// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/collective_matching.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace strag::graph {
namespace {

using trace::OpType;

constexpr int32_t kUnknown = -1;

// One end of a send / recv, keyed by (sender, receiver, k-th on that pair).
struct P2pEnds {
  int64_t send = -1;  // local node on the sender
  int64_t recv = -1;  // local node on the receiver
};

class StepMatcher {
 public:
  StepMatcher(const GroupCatalog& catalog,
              std::span<const trace::RankTrace* const> traces,
              std::span<const int32_t> ranks)
      : catalog_(catalog), traces_(traces), ranks_(ranks) {}

  std::vector<MatchedComm> Match(std::span<const std::vector<LocalNode>> nodes,
                                 int64_t* duplicates);

 private:
  void AddCollective(int32_t r, uint32_t v, const LocalNode& n,
                     int64_t* duplicates);
  void AddP2p(int32_t r, uint32_t v, const LocalNode& n);
  int32_t RankIndex(int32_t global) const;
  int32_t Peer(int32_t r, const trace::CommOp& op) const;
  int32_t OtherOfTwo(int32_t r) const;
  void EmitP2p();
  void FillMissing(MatchedComm* m) const;

  const GroupCatalog& catalog_;
  std::span<const trace::RankTrace* const> traces_;
  std::span<const int32_t> ranks_;
  std::vector<MatchedComm> out_;
  std::map<std::tuple<int32_t, OpType, int64_t>, size_t> collective_;
  std::map<std::pair<int32_t, OpType>, int64_t> order_;  // per rank: reset
  std::map<std::tuple<int32_t, int32_t, int64_t>, P2pEnds> p2p_;
  std::map<std::tuple<int32_t, int32_t, OpType>, int64_t> p2p_order_;
};

int32_t StepMatcher::RankIndex(int32_t global) const {
  auto it = std::lower_bound(ranks_.begin(), ranks_.end(), global);
  if (it == ranks_.end() || *it != global) return kUnknown;
  return static_cast<int32_t>(it - ranks_.begin());
}

// In a job of two ranks, both traced, the other one; else unknown.
int32_t StepMatcher::OtherOfTwo(int32_t r) const {
  if (ranks_.size() != 2 ||
      traces_[static_cast<size_t>(r)]->world_size != 2) {
    return kUnknown;
  }
  return ranks_[r == 0 ? 1 : 0];
}

// The peer's global rank: as the op says, else the other member of a
// two-rank group or of a two-rank job, else unknown.
int32_t StepMatcher::Peer(int32_t r, const trace::CommOp& op) const {
  const int32_t self = ranks_[static_cast<size_t>(r)];
  if (op.peer >= 0 && op.peer != self) return op.peer;
  const auto& groups = traces_[static_cast<size_t>(r)]->groups;
  if (op.group < 0 || static_cast<size_t>(op.group) >= groups.size()) {
    return OtherOfTwo(r);
  }
  const auto& list = groups[static_cast<size_t>(op.group)].ranks;
  if (list.size() == 2 && (list[0] == self) != (list[1] == self)) {
    return list[0] == self ? list[1] : list[0];
  }
  return OtherOfTwo(r);
}

void StepMatcher::AddCollective(int32_t r, uint32_t v, const LocalNode& n,
                                int64_t* duplicates) {
  const trace::CommOp& op =
      traces_[static_cast<size_t>(r)]->comms[static_cast<size_t>(n.comm)];
  const int32_t g = catalog_.Of(static_cast<size_t>(r), op.group);
  const GroupCatalog::Group& group = catalog_.groups[static_cast<size_t>(g)];
  const int64_t order = order_[{g, n.type}]++;
  const int64_t seq = group.use_seq ? op.seq : order;
  auto [it, inserted] =
      collective_.emplace(std::tuple{g, n.type, seq}, out_.size());
  size_t index = it->second;
  // A second op with this identity on the rank stays on its own (group -1:
  // nobody is missing from it).
  const bool duplicate = !inserted && out_[index].members.back().first == r;
  if (duplicate) {
    ++*duplicates;
    index = out_.size();
  }
  if (inserted || duplicate) {
    MatchedComm m;
    m.kind = n.type;
    m.group = duplicate ? -1 : g;
    m.what = std::string(trace::OpTypeName(n.type)) +
             (group.use_seq ? " seq " : " #") + std::to_string(seq) + " of " +
             group.label + (duplicate ? " (again on the same rank)" : "");
    out_.push_back(std::move(m));
  }
  out_[index].members.push_back({r, v});
}

void StepMatcher::AddP2p(int32_t r, uint32_t v, const LocalNode& n) {
  const trace::CommOp& op =
      traces_[static_cast<size_t>(r)]->comms[static_cast<size_t>(n.comm)];
  const int32_t self = ranks_[static_cast<size_t>(r)];
  const int32_t peer = Peer(r, op);
  const bool send = n.type == OpType::kSend;
  const int32_t from = send ? self : peer, to = send ? peer : self;
  if (peer == kUnknown) {  // cannot pair: a comm of its own
    MatchedComm m;
    m.kind = n.type;
    m.what = std::string(trace::OpTypeName(n.type)) + " #" +
             std::to_string(n.seq) + " on rank " + std::to_string(self) +
             " (peer unknown)";
    m.members.push_back({r, v});
    out_.push_back(std::move(m));
    return;
  }
  const int64_t k = p2p_order_[{from, to, n.type}]++;
  P2pEnds& ends = p2p_[{from, to, k}];
  (send ? ends.send : ends.recv) = v;
}

// Pairs sends with recvs; a lone end becomes a comm of its own that names
// the peer that never joined.
void StepMatcher::EmitP2p() {
  for (const auto& [key, ends] : p2p_) {
    const auto [from, to, k] = key;
    MatchedComm m;
    m.kind = ends.send >= 0 ? OpType::kSend : OpType::kRecv;
    m.what = "send #" + std::to_string(k) + " from rank " +
             std::to_string(from) + " to rank " + std::to_string(to);
    const int32_t fi = RankIndex(from), ti = RankIndex(to);
    if (ends.send >= 0)
      m.members.push_back({fi, static_cast<uint32_t>(ends.send)});
    if (ends.recv >= 0)
      m.members.push_back({ti, static_cast<uint32_t>(ends.recv)});
    if (ends.send < 0 || ends.recv < 0) {
      const int32_t peer = ends.send < 0 ? from : to;
      const int32_t pi = ends.send < 0 ? fi : ti;
      if (pi == kUnknown) {
        m.absent.push_back(peer);
      } else {
        m.missing.push_back(pi);
      }
    }
    std::sort(m.members.begin(), m.members.end());
    out_.push_back(std::move(m));
  }
}

void StepMatcher::FillMissing(MatchedComm* m) const {
  if (m->group < 0) return;
  const GroupCatalog::Group& g = catalog_.groups[static_cast<size_t>(m->group)];
  size_t j = 0;
  for (int32_t expected : g.members) {
    while (j < m->members.size() && m->members[j].first < expected) ++j;
    if (j == m->members.size() || m->members[j].first != expected) {
      m->missing.push_back(expected);
    }
  }
  m->absent = g.absent;
}

std::vector<MatchedComm> StepMatcher::Match(
    std::span<const std::vector<LocalNode>> nodes, int64_t* duplicates) {
  for (size_t r = 0; r < nodes.size(); ++r) {
    order_.clear();
    const auto ri = static_cast<int32_t>(r);
    for (uint32_t v = 0; v < nodes[r].size(); ++v) {
      const LocalNode& n = nodes[r][v];
      if (n.type == OpType::kCompute) continue;
      if (trace::IsP2p(n.type)) {
        AddP2p(ri, v, n);
      } else {
        AddCollective(ri, v, n, duplicates);
      }
    }
  }
  EmitP2p();
  for (MatchedComm& m : out_) FillMissing(&m);
  std::stable_sort(out_.begin(), out_.end(),
                   [](const MatchedComm& a, const MatchedComm& b) {
                     return a.members.front() < b.members.front();
                   });
  return std::move(out_);
}

}  // namespace

std::vector<MatchedComm> MatchStep(
    const GroupCatalog& catalog,
    std::span<const trace::RankTrace* const> traces,
    std::span<const int32_t> ranks,
    std::span<const std::vector<LocalNode>> nodes, int64_t* duplicates) {
  return StepMatcher(catalog, traces, ranks).Match(nodes, duplicates);
}

}  // namespace strag::graph
