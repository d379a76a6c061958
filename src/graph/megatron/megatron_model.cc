// SPDX-License-Identifier: Apache-2.0
#include "graph/megatron/megatron_model.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>

namespace strag::graph {
namespace {

using trace::OpType;

constexpr double kNoopEpsilonS = 5e-5;  // whatif-spec.md §3.2

// The ops of one stage of the reference instance, by type, in stream order.
struct StageOps {
  std::array<std::vector<NodeId>, trace::kNumOpTypes> by_type;
  std::vector<NodeId> compute;  // forward and backward, stream order
  // Valid (paired) p2p ops per p2p type, stream order; filled by matching.
  std::array<std::vector<NodeId>, trace::kNumOpTypes> valid;
};

class Builder {
 public:
  Builder(std::span<const RefOp> ref_ops, const MegatronOptions& options)
      : options_(options) {
    ops_.assign(ref_ops.begin(), ref_ops.end());
    std::sort(ops_.begin(), ops_.end(), [](const RefOp& a, const RefOp& b) {
      if (a.key.stage != b.key.stage) return a.key.stage < b.key.stage;
      if (a.key.type != b.key.type) return a.key.type < b.key.type;
      return a.key.seq_id < b.key.seq_id;
    });
  }

  Result<MegatronModel> Build();

 private:
  bool StreamLess(NodeId a, NodeId b) const {
    const RefOp &x = ops_[a], &y = ops_[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.key.seq_id != y.key.seq_id) return x.key.seq_id < y.key.seq_id;
    return trace::OpTypeName(x.key.type) < trace::OpTypeName(y.key.type);
  }
  void SortStream(std::vector<NodeId>* nodes) const {
    std::stable_sort(nodes->begin(), nodes->end(),
                     [this](NodeId a, NodeId b) { return StreamLess(a, b); });
  }
  int64_t Find(OpType type, int32_t seq, int32_t stage) const {
    return model_.index.Find(OpKey{type, seq, stage});
  }
  void Chain(const std::vector<NodeId>& nodes) {
    for (size_t i = 1; i < nodes.size(); ++i) Edge(nodes[i - 1], nodes[i]);
  }
  void Edge(NodeId u, NodeId v) { model_.graph.AddEdge(u, v); }
  std::string Describe(NodeId v) const { return DescribeOpKey(ops_[v].key); }

  Status CollectStages();
  Status MatchP2p(int32_t stage, OpType p2p, OpType compute, bool is_send,
                  int delta);
  Status AddWarmupEdge(int32_t stage);
  void AddDpEdges(int32_t stage);
  Status AddPostComputeChain(int32_t stage);
  Status AddGroups();
  Status PairP2p(int32_t stage, OpType type, OpType peer_type, int32_t peer);

  MegatronOptions options_;
  std::vector<RefOp> ops_;
  std::vector<StageOps> stages_;
  MegatronModel model_;
};

Status Builder::CollectStages() {
  stages_.assign(static_cast<size_t>(options_.pp), StageOps{});
  for (NodeId v = 0; v < ops_.size(); ++v) {
    const OpKey& key = ops_[v].key;
    if (key.stage < 0 || key.stage >= options_.pp) {
      return InvalidInput(Describe(v) + ": stage out of range");
    }
    if (v > 0 && ops_[v - 1].key == key) {
      return InvalidInput(Describe(v) + " appears twice in one instance");
    }
    StageOps& s = stages_[static_cast<size_t>(key.stage)];
    s.by_type[static_cast<size_t>(key.type)].push_back(v);
    if (trace::IsCompute(key.type)) s.compute.push_back(v);
  }
  for (StageOps& s : stages_) {
    for (auto& list : s.by_type) SortStream(&list);
    SortStream(&s.compute);
  }
  return Status::Ok();
}

// whatif-spec.md §3.2: detects type-1 (by time) and type-2 (by peer chunk)
// profiler no-ops, matches the rest to computes, and adds rules E2 and E3.
Status Builder::MatchP2p(int32_t stage, OpType p2p, OpType compute,
                         bool is_send, int delta) {
  StageOps& s = stages_[static_cast<size_t>(stage)];
  const auto& ops = s.by_type[static_cast<size_t>(p2p)];
  const auto& computes = s.by_type[static_cast<size_t>(compute)];
  Chain(ops);  // E2
  double last_start = -std::numeric_limits<double>::infinity();
  double first_end = std::numeric_limits<double>::infinity();
  for (NodeId c : computes) {
    last_start = std::max(last_start, static_cast<double>(ops_[c].start));
    first_end = std::min(first_end, static_cast<double>(ops_[c].end));
  }
  std::vector<NodeId> candidates;
  for (NodeId v : ops) {
    const bool type1 =
        is_send
            ? static_cast<double>(ops_[v].end) < first_end - kNoopEpsilonS
            : static_cast<double>(ops_[v].start) > last_start + kNoopEpsilonS;
    if (type1) {
      model_.noop_nodes.push_back(v);
    } else {
      candidates.push_back(v);
    }
  }
  const size_t n = computes.size(), cnt = candidates.size();
  const bool end_stage = stage == 0 || stage == options_.pp - 1;
  if (cnt != n && !(end_stage && (cnt == 0 || cnt + 1 == n))) {
    return InvalidInput(
        "stage " + std::to_string(stage) + ": " + std::to_string(cnt) + " " +
        std::string(trace::OpTypeName(p2p)) + " ops for " + std::to_string(n) +
        " " + std::string(trace::OpTypeName(compute)) +
        " ops (each needs its " + std::string(trace::OpTypeName(p2p)) +
        "; only the first and last stage may lack them)");
  }
  const int32_t k0 = (!is_send && cnt + 1 == n) ? 1 : 0;
  const int64_t num_chunks = int64_t{options_.vpp} * options_.pp;
  for (size_t j = 0; j < cnt; ++j) {
    const NodeId v = candidates[j];
    const int64_t c = Find(compute, k0 + static_cast<int32_t>(j), stage);
    if (c < 0) {
      return InvalidInput(
          Describe(v) + ": no " + std::string(trace::OpTypeName(compute)) +
          " #" + std::to_string(k0 + static_cast<int32_t>(j)) + " to match");
    }
    const auto cn = static_cast<NodeId>(c);
    const RefOp& cop = ops_[cn];
    const int64_t gmc =
        cop.global_chunk >= 0
            ? int64_t{cop.global_chunk}
            : int64_t{std::max(cop.chunk, 0)} * options_.pp + stage;
    const int64_t peer = gmc + delta;
    if (peer < 0 || peer >= num_chunks) {
      model_.noop_nodes.push_back(v);  // type-2: keeps its compute edges
    } else {
      s.valid[static_cast<size_t>(p2p)].push_back(v);
    }
    if (is_send) {
      Edge(cn, v);  // E3a
    } else {
      Edge(v, cn);  // E3b
      if (cop.key.seq_id >= 1) {
        const int64_t prev = Find(compute, cop.key.seq_id - 1, stage);
        if (prev < 0) {
          return InvalidInput(Describe(v) + ": " +
                              std::string(trace::OpTypeName(compute)) + " #" +
                              std::to_string(cop.key.seq_id - 1) +
                              " before its compute is missing");
        }
        Edge(static_cast<NodeId>(prev), v);
      }
    }
  }
  return Status::Ok();
}

// E4: the first backward send / recv wait for the forward two positions
// before the first backward compute (the warm-up -> 1F1B transition).
Status Builder::AddWarmupEdge(int32_t stage) {
  const auto& c = stages_[static_cast<size_t>(stage)].compute;
  size_t j = 0;
  while (j < c.size() && ops_[c[j]].key.type != OpType::kBackwardCompute) ++j;
  if (j == c.size() || j < 2) return Status::Ok();
  for (size_t k : {j - 1, j - 2}) {
    if (ops_[c[k]].key.type != OpType::kForwardCompute) {
      return InvalidInput("stage " + std::to_string(stage) + ": " +
                          Describe(c[k]) + " precedes the first backward");
    }
  }
  for (OpType t : {OpType::kBackwardRecv, OpType::kBackwardSend}) {
    const int64_t v = Find(t, 0, stage);
    if (v >= 0) Edge(c[j - 2], static_cast<NodeId>(v));
  }
  return Status::Ok();
}

// E5-E7: the DP stream, params all-gather -> first forward of its chunk and,
// with overlapped DP, last backward of a chunk -> its first reduce-scatter.
void Builder::AddDpEdges(int32_t stage) {
  const StageOps& s = stages_[static_cast<size_t>(stage)];
  const auto& ag = s.by_type[static_cast<size_t>(OpType::kParamsAllGather)];
  const auto& rs = s.by_type[static_cast<size_t>(OpType::kGradsReduceScatter)];
  std::vector<NodeId> dp_stream(ag);
  dp_stream.insert(dp_stream.end(), rs.begin(), rs.end());
  SortStream(&dp_stream);
  Chain(dp_stream);                   // E5
  std::map<int32_t, NodeId> last_ag;  // chunk -> AG with the highest seq_id
  for (NodeId v : ag) {
    auto [it, inserted] = last_ag.emplace(ops_[v].chunk, v);
    if (!inserted && ops_[v].key.seq_id > ops_[it->second].key.seq_id) {
      it->second = v;
    }
  }
  const auto& fwd = s.by_type[static_cast<size_t>(OpType::kForwardCompute)];
  for (auto [chunk, v] : last_ag) {
    for (NodeId f : fwd) {  // stream order: the first match is the earliest
      if (ops_[f].chunk == chunk) {
        Edge(v, f);  // E6
        break;
      }
    }
  }
  if (!options_.ovlp_dp) return;
  std::map<int32_t, NodeId> first_rs;  // chunk -> RS with the lowest seq_id
  for (NodeId v : rs) {
    auto [it, inserted] = first_rs.emplace(ops_[v].chunk, v);
    if (!inserted && ops_[v].key.seq_id < ops_[it->second].key.seq_id) {
      it->second = v;
    }
  }
  const auto& bwd = s.by_type[static_cast<size_t>(OpType::kBackwardCompute)];
  for (auto [chunk, v] : first_rs) {
    int64_t last = -1;
    for (NodeId b : bwd) {
      if (ops_[b].chunk != chunk) continue;
      if (last < 0 || ops_[b].end > ops_[static_cast<NodeId>(last)].end)
        last = b;
    }
    if (last >= 0) Edge(static_cast<NodeId>(last), v);  // E7
  }
}

// E8: last compute -> gc -> layernorm -> [embedding] -> (RS chain |
// separate all-reduce) -> clip -> optimizer.
Status Builder::AddPostComputeChain(int32_t stage) {
  const StageOps& s = stages_[static_cast<size_t>(stage)];
  const std::string where = "stage " + std::to_string(stage);
  if (s.compute.empty()) return InvalidInput(where + ": no compute ops");
  NodeId last = s.compute.front();
  for (NodeId c : s.compute) {
    if (ops_[c].end > ops_[last].end) last = c;
  }
  auto require = [&](OpType type) -> Result<NodeId> {
    const int64_t v = Find(type, 0, stage);
    if (v < 0) {
      return InvalidInput(where + ": missing op " +
                          std::string(trace::OpTypeName(type)) + " #0");
    }
    return static_cast<NodeId>(v);
  };
  ASSIGN_OR_RETURN(NodeId gc, require(OpType::kGc));
  ASSIGN_OR_RETURN(NodeId layernorm, require(OpType::kLayernormGradsAllReduce));
  ASSIGN_OR_RETURN(NodeId clip, require(OpType::kOptimizerClipMainGrad));
  ASSIGN_OR_RETURN(NodeId optimizer, require(OpType::kOptimizer));
  Edge(last, gc);
  std::vector<NodeId> chain = {layernorm};
  if (stage == 0 || stage == options_.pp - 1) {
    ASSIGN_OR_RETURN(NodeId emb, require(OpType::kEmbeddingGradsAllReduce));
    chain.push_back(emb);
  }
  std::vector<NodeId> head_deps = {gc};
  const auto& rs = s.by_type[static_cast<size_t>(OpType::kGradsReduceScatter)];
  if (options_.use_dp && options_.ovlp_dp) {
    if (!rs.empty()) {
      NodeId max_rs = rs.front();
      for (NodeId v : rs) {
        if (ops_[v].key.seq_id > ops_[max_rs].key.seq_id) max_rs = v;
      }
      head_deps.push_back(max_rs);
    }
    ASSIGN_OR_RETURN(NodeId sep, require(OpType::kSeparateGradsAllReduce));
    chain.push_back(sep);
  } else if (options_.use_dp) {
    std::vector<NodeId> by_seq(rs);
    std::sort(by_seq.begin(), by_seq.end(), [this](NodeId a, NodeId b) {
      return ops_[a].key.seq_id < ops_[b].key.seq_id;
    });
    chain.insert(chain.end(), by_seq.begin(), by_seq.end());
  }
  chain.push_back(clip);
  chain.push_back(optimizer);
  for (NodeId d : head_deps) Edge(d, chain.front());
  Chain(chain);
  model_.optimizer_nodes.push_back(optimizer);
  return Status::Ok();
}

Status Builder::PairP2p(int32_t stage, OpType type, OpType peer_type,
                        int32_t peer) {
  const auto& mine =
      stages_[static_cast<size_t>(stage)].valid[static_cast<size_t>(type)];
  const auto& theirs =
      stages_[static_cast<size_t>(peer)].valid[static_cast<size_t>(peer_type)];
  const size_t n = std::min(mine.size(), theirs.size());
  if (mine.size() != theirs.size()) {
    const NodeId extra = mine.size() > n ? mine[n] : theirs[n];
    return InvalidInput(
        Describe(extra) + " has no peer: stage " + std::to_string(stage) +
        " has " + std::to_string(mine.size()) + " " +
        std::string(trace::OpTypeName(type)) + " ops but stage " +
        std::to_string(peer) + " has " + std::to_string(theirs.size()) + " " +
        std::string(trace::OpTypeName(peer_type)) + " ops");
  }
  for (size_t v = 0; v < n; ++v) {
    RETURN_IF_ERROR(model_.graph.AddGroup({mine[v], theirs[v]}, false));
  }
  return Status::Ok();
}

Status Builder::AddGroups() {
  const int32_t pp = options_.pp;
  for (int32_t s = 0; s < pp; ++s) {
    RETURN_IF_ERROR(
        PairP2p(s, OpType::kForwardSend, OpType::kForwardRecv, (s + 1) % pp));
    RETURN_IF_ERROR(PairP2p(s, OpType::kBackwardSend, OpType::kBackwardRecv,
                            (s - 1 + pp) % pp));
  }
  std::vector<NodeId> noops(model_.noop_nodes);
  std::sort(noops.begin(), noops.end());
  for (NodeId v : noops) RETURN_IF_ERROR(model_.graph.AddGroup({v}, false));
  if (options_.use_dp) {
    for (NodeId v = 0; v < ops_.size(); ++v) {
      const OpType t = ops_[v].key.type;
      if (t == OpType::kParamsAllGather || t == OpType::kGradsReduceScatter ||
          t == OpType::kSeparateGradsAllReduce) {
        RETURN_IF_ERROR(model_.graph.AddGroup({v}, true));
      }
    }
  }
  std::vector<NodeId> emb;
  for (int32_t s : {0, pp - 1}) {
    const int64_t v = Find(OpType::kEmbeddingGradsAllReduce, 0, s);
    if (v >= 0 && (emb.empty() || emb.front() != v)) {
      emb.push_back(static_cast<NodeId>(v));
    }
  }
  if (!emb.empty()) RETURN_IF_ERROR(model_.graph.AddGroup(emb, false));
  std::vector<NodeId> clip;
  for (int32_t s = 0; s < pp; ++s) {
    const int64_t v = Find(OpType::kOptimizerClipMainGrad, 0, s);
    if (v >= 0) clip.push_back(static_cast<NodeId>(v));
  }
  if (!clip.empty()) RETURN_IF_ERROR(model_.graph.AddGroup(clip, true));
  return Status::Ok();
}

Result<MegatronModel> Builder::Build() {
  for (const RefOp& op : ops_) model_.keys.push_back(op.key);
  model_.index = OpKeyIndex(model_.keys, options_.pp);
  model_.graph = DepGraph(ops_.size());
  RETURN_IF_ERROR(CollectStages());
  for (int32_t s = 0; s < options_.pp; ++s) {
    Chain(stages_[static_cast<size_t>(s)].compute);  // E1
    RETURN_IF_ERROR(
        MatchP2p(s, OpType::kForwardSend, OpType::kForwardCompute, true, +1));
    RETURN_IF_ERROR(
        MatchP2p(s, OpType::kForwardRecv, OpType::kForwardCompute, false, -1));
    RETURN_IF_ERROR(
        MatchP2p(s, OpType::kBackwardSend, OpType::kBackwardCompute, true, -1));
    RETURN_IF_ERROR(MatchP2p(s, OpType::kBackwardRecv, OpType::kBackwardCompute,
                             false, +1));
    RETURN_IF_ERROR(AddWarmupEdge(s));
    if (options_.use_dp) AddDpEdges(s);
    RETURN_IF_ERROR(AddPostComputeChain(s));
  }
  RETURN_IF_ERROR(AddGroups());
  RETURN_IF_ERROR(model_.graph.Finalize(
      [this](NodeId v) { return DescribeOpKey(model_.keys[v]); },
      model_.noop_nodes));
  return std::move(model_);
}

}  // namespace

std::string DescribeOpKey(const OpKey& key) {
  return std::string(trace::OpTypeName(key.type)) + " #" +
         std::to_string(key.seq_id) + " on stage " + std::to_string(key.stage);
}

OpKeyIndex::OpKeyIndex(std::span<const OpKey> keys, int32_t pp)
    : pp_(pp), tables_(static_cast<size_t>(pp) * trace::kNumOpTypes) {
  for (size_t v = 0; v < keys.size(); ++v) {
    const OpKey& k = keys[v];
    if (k.stage < 0 || k.stage >= pp || k.seq_id < 0) continue;
    auto& table = tables_[Slot(k.type, k.stage)];
    const auto seq = static_cast<size_t>(k.seq_id);
    if (table.size() <= seq) table.resize(seq + 1, -1);
    table[seq] = static_cast<int64_t>(v);
  }
}

Result<MegatronModel> BuildMegatronModel(std::span<const RefOp> ref_ops,
                                         const MegatronOptions& options) {
  if (options.pp < 1 || options.vpp < 1) {
    return InvalidInput("pipeline size and vpp must be at least 1");
  }
  // Sequence ids index dense per-(stage, type) tables: an instance with n
  // ops has no sequence id above n.
  for (const RefOp& op : ref_ops) {
    if (op.key.seq_id < 0 ||
        static_cast<size_t>(op.key.seq_id) > ref_ops.size()) {
      return InvalidInput(DescribeOpKey(op.key) +
                          ": seq_id out of range (the "
                          "instance has " +
                          std::to_string(ref_ops.size()) + " ops)");
    }
  }
  return Builder(ref_ops, options).Build();
}

}  // namespace strag::graph
