// SPDX-License-Identifier: Apache-2.0
#include "sim/megatron_schedule.h"

#include <algorithm>

namespace strag::sim {

using trace::OpType;

namespace {

// finalize_model_grads and the optimizer, after the last backward: the same
// for both schedules except for one reduce-scatter per model chunk.
void AddPostCompute(int32_t stage, int32_t pp, int32_t num_chunks, bool with_dp,
                    std::vector<ScheduledOp>* ops) {
  ops->push_back({OpType::kGc, 0, -1, -1});
  ops->push_back({OpType::kLayernormGradsAllReduce, 0, -1, -1});
  if (stage == 0 || stage == pp - 1) {
    ops->push_back({OpType::kEmbeddingGradsAllReduce, 0, -1, -1});
  }
  if (with_dp) {
    for (int32_t c = 0; c < num_chunks; ++c) {
      ops->push_back({OpType::kGradsReduceScatter, c, -1, c});
    }
  }
  ops->push_back({OpType::kOptimizerClipMainGrad, 0, -1, -1});
  ops->push_back({OpType::kOptimizer, 0, -1, -1});
}

}  // namespace

std::vector<ScheduledOp> OneFOneBProgram(int32_t stage, int32_t pp, int32_t m,
                                         bool with_dp) {
  const bool first = stage == 0, last = stage == pp - 1;
  const int32_t warmup = std::min(pp - stage - 1, m);
  const int32_t steady = m - warmup;
  std::vector<ScheduledOp> ops;
  auto add = [&ops](OpType t, int32_t seq, int32_t mb) {
    const bool chunked = trace::IsCompute(t) || t == OpType::kParamsAllGather ||
                         t == OpType::kGradsReduceScatter;
    ops.push_back(ScheduledOp{t, seq, mb, chunked ? 0 : -1});
  };
  if (with_dp) add(OpType::kParamsAllGather, 0, -1);
  for (int32_t i = 0; i < warmup; ++i) {
    if (!first) add(OpType::kForwardRecv, i, i);
    add(OpType::kForwardCompute, i, i);
    if (!last) add(OpType::kForwardSend, i, i);
  }
  if (steady > 0 && !first) add(OpType::kForwardRecv, warmup, warmup);
  for (int32_t k = 0; k < steady; ++k) {
    const int32_t f = warmup + k;
    add(OpType::kForwardCompute, f, f);
    if (!last) {  // send_forward_recv_backward
      add(OpType::kForwardSend, f, f);
      add(OpType::kBackwardRecv, k, k);
    }
    add(OpType::kBackwardCompute, k, k);
    if (!first) add(OpType::kBackwardSend, k, k);
    if (k + 1 < steady && !first) add(OpType::kForwardRecv, f + 1, f + 1);
  }
  for (int32_t i = steady; i < m; ++i) {
    if (!last) add(OpType::kBackwardRecv, i, i);
    add(OpType::kBackwardCompute, i, i);
    if (!first) add(OpType::kBackwardSend, i, i);
  }
  AddPostCompute(stage, pp, 1, with_dp, &ops);
  return ops;
}

std::vector<VirtualMicrobatch> InterleavedScheduleTable(int32_t microbatches,
                                                        int32_t vpp,
                                                        int32_t group_size) {
  // A group size below 1 would never advance; Megatron's default is pp.
  const int32_t g = std::max(group_size, 1);
  std::vector<VirtualMicrobatch> table;
  table.reserve(static_cast<size_t>(std::max(microbatches, 0)) *
                static_cast<size_t>(std::max(vpp, 0)));
  for (int32_t lo = 0; lo < microbatches; lo += g) {
    const int32_t hi = std::min(lo + g, microbatches);
    for (int32_t c = 0; c < vpp; ++c) {
      for (int32_t mb = lo; mb < hi; ++mb) table.push_back({mb, c});
    }
  }
  return table;
}

std::vector<ComputeStep> InterleavedComputeOrder(int32_t stage, int32_t pp,
                                                 int32_t microbatches,
                                                 int32_t vpp,
                                                 int32_t group_size) {
  const std::vector<VirtualMicrobatch> table =
      InterleavedScheduleTable(microbatches, vpp, group_size);
  const auto total = static_cast<int64_t>(table.size());
  // Megatron's warm-up: one group per extra chunk, so that the last chunk
  // has the group's first microbatch before any backward runs, plus two per
  // downstream stage for the round trip (forward there, gradient back) of
  // the first backward.
  const int64_t warmup =
      std::min<int64_t>(int64_t{2} * (pp - stage - 1) +
                            int64_t{vpp - 1} * std::max(group_size, 1),
                        total);
  auto forward = [&](int64_t k) {
    const VirtualMicrobatch& e = table[static_cast<size_t>(k)];
    return ComputeStep{true, e.microbatch, e.chunk};
  };
  // Backwards walk the chunks from the last one (the loss side) down.
  auto backward = [&](int64_t k) {
    const VirtualMicrobatch& e = table[static_cast<size_t>(k)];
    return ComputeStep{false, e.microbatch, vpp - 1 - e.chunk};
  };
  std::vector<ComputeStep> order;
  order.reserve(2 * table.size());
  for (int64_t k = 0; k < warmup; ++k) order.push_back(forward(k));
  for (int64_t k = 0; k < total - warmup; ++k) {
    order.push_back(forward(warmup + k));
    order.push_back(backward(k));
  }
  for (int64_t k = total - warmup; k < total; ++k) {
    order.push_back(backward(k));
  }
  return order;
}

std::vector<ScheduledOp> InterleavedProgram(int32_t stage, int32_t pp,
                                            int32_t microbatches, int32_t vpp,
                                            bool with_dp) {
  std::vector<ScheduledOp> ops;
  if (with_dp) {
    for (int32_t c = 0; c < vpp; ++c) {
      ops.push_back({OpType::kParamsAllGather, c, -1, c});
    }
  }
  // Every compute gets its recv and send, even where the peer chunk does not
  // exist (chunk 0 on stage 0, chunk vpp-1 on the last stage): the profiler
  // records them, and the dependency model turns them into type-2 no-ops, so
  // the pairing by rank among valid ops stays aligned across stages.
  int32_t forwards = 0, backwards = 0;
  for (const ComputeStep& step :
       InterleavedComputeOrder(stage, pp, microbatches, vpp, pp)) {
    int32_t& seq = step.forward ? forwards : backwards;
    const OpType recv =
        step.forward ? OpType::kForwardRecv : OpType::kBackwardRecv;
    const OpType compute =
        step.forward ? OpType::kForwardCompute : OpType::kBackwardCompute;
    const OpType send =
        step.forward ? OpType::kForwardSend : OpType::kBackwardSend;
    ops.push_back({recv, seq, step.microbatch, -1});
    ops.push_back({compute, seq, step.microbatch, step.chunk});
    ops.push_back({send, seq, step.microbatch, -1});
    ++seq;
  }
  AddPostCompute(stage, pp, vpp, with_dp, &ops);
  return ops;
}

}  // namespace strag::sim
