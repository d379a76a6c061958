// SPDX-License-Identifier: Apache-2.0
// The op types of a Megatron-LM training step as the ops CSV names them
// (whatif-spec.md §1.3), and the groups the what-if attribution reports.

#ifndef STRAG_SRC_TRACE_OP_TYPE_H_
#define STRAG_SRC_TRACE_OP_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace strag::trace {

enum class OpType : uint8_t {
  kForwardCompute,
  kBackwardCompute,
  kForwardSend,
  kForwardRecv,
  kBackwardSend,
  kBackwardRecv,
  kParamsAllGather,
  kGradsReduceScatter,
  kSeparateGradsAllReduce,
  kLayernormGradsAllReduce,
  kEmbeddingGradsAllReduce,
  kOptimizerClipMainGrad,
  kOptimizer,
  kGc,
  // Generic types, for traces that are not Megatron op tables (Kineto): a
  // compute segment (kernels or CPU ops between communication points) and one
  // type per collective kind.
  kCompute,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSend,
  kRecv,
  kBarrier,
  kOtherComm,
};
inline constexpr int kNumOpTypes = 25;
// The Megatron types (those of the ops CSV) come first.
inline constexpr int kNumMegatronOpTypes = static_cast<int>(OpType::kCompute);

// The attribution groups of the published analysis: op types, with the four
// p2p types merged into forward-pp-comm / backward-pp-comm.
enum class OpGroup : uint8_t {
  kForwardCompute,
  kBackwardCompute,
  kForwardPpComm,
  kBackwardPpComm,
  kParamsAllGather,
  kGradsReduceScatter,
  kSeparateGradsAllReduce,
  kLayernormGradsAllReduce,
  kEmbeddingGradsAllReduce,
  kOptimizerClipMainGrad,
  kOptimizer,
  kGc,
  kCompute,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kP2p,  // send and recv
  kBarrier,
  kOtherComm,
};
inline constexpr int kNumOpGroups = 22;

// The name used in the ops CSV, e.g. "forward-compute".
std::string_view OpTypeName(OpType type);
std::optional<OpType> ParseOpType(std::string_view name);

OpGroup GroupOf(OpType type);
std::string_view OpGroupName(OpGroup group);
std::optional<OpGroup> ParseOpGroup(std::string_view name);

// Compute ops are idealised with the mean, communication ops with the median
// (whatif-spec.md §6.2). gc and optimizer count as compute.
bool IsIdealisedAsComm(OpType type);
bool IsP2p(OpType type);
bool IsCompute(OpType type);  // forward-compute or backward-compute
bool IsGeneric(OpType type);  // compute and the collective kinds after it

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_OP_TYPE_H_
