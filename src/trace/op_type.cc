// SPDX-License-Identifier: Apache-2.0
#include "trace/op_type.h"

#include <array>

namespace strag::trace {
namespace {

constexpr std::array<std::string_view, kNumOpTypes> kOpTypeNames = {
    "forward-compute",
    "backward-compute",
    "forward-send",
    "forward-recv",
    "backward-send",
    "backward-recv",
    "params-all-gather",
    "grads-reduce-scatter",
    "separate-grads-all-reduce",
    "layernorm-grads-all-reduce",
    "embedding-grads-all-reduce",
    "optimizer-clip-main-grad",
    "optimizer",
    "gc",
    "compute",
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "broadcast",
    "reduce",
    "all-to-all",
    "send",
    "recv",
    "barrier",
    "other-comm",
};

constexpr std::array<std::string_view, kNumOpGroups> kOpGroupNames = {
    "forward-compute",
    "backward-compute",
    "forward-pp-comm",
    "backward-pp-comm",
    "params-all-gather",
    "grads-reduce-scatter",
    "separate-grads-all-reduce",
    "layernorm-grads-all-reduce",
    "embedding-grads-all-reduce",
    "optimizer-clip-main-grad",
    "optimizer",
    "gc",
    "compute",
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "broadcast",
    "reduce",
    "all-to-all",
    "p2p",
    "barrier",
    "other-comm",
};

// The enum value whose name is `name` in `names`, if any.
template <typename Enum, size_t N>
std::optional<Enum> FindByName(const std::array<std::string_view, N>& names,
                               std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view OpTypeName(OpType type) {
  return kOpTypeNames[static_cast<size_t>(type)];
}

std::optional<OpType> ParseOpType(std::string_view name) {
  return FindByName<OpType>(kOpTypeNames, name);
}

OpGroup GroupOf(OpType type) {
  switch (type) {
    case OpType::kForwardCompute:
      return OpGroup::kForwardCompute;
    case OpType::kBackwardCompute:
      return OpGroup::kBackwardCompute;
    case OpType::kForwardSend:
    case OpType::kForwardRecv:
      return OpGroup::kForwardPpComm;
    case OpType::kBackwardSend:
    case OpType::kBackwardRecv:
      return OpGroup::kBackwardPpComm;
    case OpType::kParamsAllGather:
      return OpGroup::kParamsAllGather;
    case OpType::kGradsReduceScatter:
      return OpGroup::kGradsReduceScatter;
    case OpType::kSeparateGradsAllReduce:
      return OpGroup::kSeparateGradsAllReduce;
    case OpType::kLayernormGradsAllReduce:
      return OpGroup::kLayernormGradsAllReduce;
    case OpType::kEmbeddingGradsAllReduce:
      return OpGroup::kEmbeddingGradsAllReduce;
    case OpType::kOptimizerClipMainGrad:
      return OpGroup::kOptimizerClipMainGrad;
    case OpType::kOptimizer:
      return OpGroup::kOptimizer;
    case OpType::kGc:
      return OpGroup::kGc;
    case OpType::kCompute:
      return OpGroup::kCompute;
    case OpType::kAllReduce:
      return OpGroup::kAllReduce;
    case OpType::kAllGather:
      return OpGroup::kAllGather;
    case OpType::kReduceScatter:
      return OpGroup::kReduceScatter;
    case OpType::kBroadcast:
      return OpGroup::kBroadcast;
    case OpType::kReduce:
      return OpGroup::kReduce;
    case OpType::kAllToAll:
      return OpGroup::kAllToAll;
    case OpType::kSend:
    case OpType::kRecv:
      return OpGroup::kP2p;
    case OpType::kBarrier:
      return OpGroup::kBarrier;
    case OpType::kOtherComm:
      return OpGroup::kOtherComm;
  }
  return OpGroup::kGc;  // unreachable: the switch covers every OpType
}

std::string_view OpGroupName(OpGroup group) {
  return kOpGroupNames[static_cast<size_t>(group)];
}

std::optional<OpGroup> ParseOpGroup(std::string_view name) {
  return FindByName<OpGroup>(kOpGroupNames, name);
}

bool IsIdealisedAsComm(OpType type) {
  return !(type == OpType::kForwardCompute ||
           type == OpType::kBackwardCompute || type == OpType::kOptimizer ||
           type == OpType::kGc || type == OpType::kCompute);
}

bool IsP2p(OpType type) {
  return type == OpType::kForwardSend || type == OpType::kForwardRecv ||
         type == OpType::kBackwardSend || type == OpType::kBackwardRecv ||
         type == OpType::kSend || type == OpType::kRecv;
}

bool IsCompute(OpType type) {
  return type == OpType::kForwardCompute || type == OpType::kBackwardCompute;
}

bool IsGeneric(OpType type) { return type >= OpType::kCompute; }

}  // namespace strag::trace
