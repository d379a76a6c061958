// SPDX-License-Identifier: Apache-2.0
// The published Megatron-LM dependency model (whatif-spec.md §3).
//
// Built once from the reference instance (DP rank 0 of the first step) and
// applied to every instance. Six streams per worker (compute, DP comm and the
// four p2p streams), same-stream order, p2p <-> compute matching with
// profiler no-op detection, the warm-up -> 1F1B edge, the post-compute chain,
// and comm groups (p2p pairs, DP collectives, clip over all stages, the
// embedding pair).

#ifndef STRAG_SRC_GRAPH_MEGATRON_MEGATRON_MODEL_H_
#define STRAG_SRC_GRAPH_MEGATRON_MEGATRON_MODEL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/dep_graph.h"
#include "trace/op_type.h"

namespace strag::graph {

// Identity of an op within an instance: (optype, seq_id, stage).
struct OpKey {
  trace::OpType type;
  int32_t seq_id;
  int32_t stage;
  bool operator==(const OpKey&) const = default;
};
std::string DescribeOpKey(const OpKey& key);  // "forward-send #3 on stage 1"

// One op of the reference instance, with its traced binary32 times (seconds).
struct RefOp {
  OpKey key;
  int32_t chunk = -1;         // `mc`
  int32_t global_chunk = -1;  // `gmc`
  float start = 0;
  float end = 0;  // fl32(start + duration)
};

struct MegatronOptions {
  int32_t pp = 1;        // pipeline stages
  int32_t vpp = 1;       // model chunks per stage
  bool use_dp = true;    // dp * cp > 1: DP collectives are comm groups
  bool ovlp_dp = false;  // overlapped DP (separate-grads-all-reduce present)
};

// Maps OpKey -> NodeId with dense per-(stage, type) tables.
class OpKeyIndex {
 public:
  OpKeyIndex() = default;
  OpKeyIndex(std::span<const OpKey> keys, int32_t pp);
  // Returns the node of `key`, or -1 when the model has no such op.
  int64_t Find(const OpKey& key) const {
    if (key.stage < 0 || key.stage >= pp_ || key.seq_id < 0) return -1;
    const auto& table = tables_[Slot(key.type, key.stage)];
    if (static_cast<size_t>(key.seq_id) >= table.size()) return -1;
    return table[static_cast<size_t>(key.seq_id)];
  }

 private:
  size_t Slot(trace::OpType type, int32_t stage) const {
    return static_cast<size_t>(stage) * trace::kNumOpTypes +
           static_cast<size_t>(type);
  }
  int32_t pp_ = 0;
  std::vector<std::vector<int64_t>> tables_;
};

struct MegatronModel {
  std::vector<OpKey> keys;  // NodeId -> op
  DepGraph graph{0};
  OpKeyIndex index;
  std::vector<NodeId> optimizer_nodes;  // T_opt = max end of these
  std::vector<NodeId> noop_nodes;       // profiler no-op sends / recvs
};

// Builds the model from the ops of the reference instance (any order; each
// key at most once). Fails with kInvalidInput and a message naming the stage
// and op when the trace does not fit the model (a p2p op without its peer, a
// missing gc / optimizer op, a cycle, ...).
Result<MegatronModel> BuildMegatronModel(std::span<const RefOp> ref_ops,
                                         const MegatronOptions& options);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_MEGATRON_MEGATRON_MODEL_H_
