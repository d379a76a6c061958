// SPDX-License-Identifier: Apache-2.0
#include "sim/megatron_schedule.h"

#include <algorithm>

namespace strag::sim {

using trace::OpType;

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
  add(OpType::kGc, 0, -1);
  add(OpType::kLayernormGradsAllReduce, 0, -1);
  if (first || last) add(OpType::kEmbeddingGradsAllReduce, 0, -1);
  if (with_dp) add(OpType::kGradsReduceScatter, 0, -1);
  add(OpType::kOptimizerClipMainGrad, 0, -1);
  add(OpType::kOptimizer, 0, -1);
  return ops;
}

// TODO(helper): the interleaved order; until then no program (the model
// builder rejects the job with a clear error).
std::vector<ScheduledOp> InterleavedProgram(int32_t, int32_t, int32_t, int32_t,
                                            bool) {
  return {};
}

}  // namespace strag::sim
