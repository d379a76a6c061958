// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_vocabulary.h"

#include <charconv>
#include <optional>

#include "ingest/kineto/kineto_names.h"

namespace strag::ingest::kineto_export {

Kind KindOf(OpType type) {
  switch (type) {
    case OpType::kGc:
      return Kind::kGc;
    case OpType::kForwardSend:
    case OpType::kBackwardSend:
      return Kind::kSend;
    case OpType::kForwardRecv:
    case OpType::kBackwardRecv:
      return Kind::kRecv;
    case OpType::kParamsAllGather:
      return Kind::kAllGather;
    case OpType::kGradsReduceScatter:
      return Kind::kReduceScatter;
    case OpType::kSeparateGradsAllReduce:
    case OpType::kLayernormGradsAllReduce:
    case OpType::kEmbeddingGradsAllReduce:
    case OpType::kOptimizerClipMainGrad:
      return Kind::kAllReduce;
    default:  // forward, backward, optimizer (generic types are rejected)
      return Kind::kCompute;
  }
}

// Megatron's program order of the op types, for ops that start and end at
// the same instant (zero durations are common in specs without comm times).
int TypeOrder(OpType type) {
  switch (type) {
    case OpType::kParamsAllGather:
      return 0;
    case OpType::kForwardRecv:
      return 1;
    case OpType::kForwardCompute:
      return 2;
    case OpType::kForwardSend:
      return 3;
    case OpType::kBackwardRecv:
      return 4;
    case OpType::kBackwardCompute:
      return 5;
    case OpType::kBackwardSend:
      return 6;
    case OpType::kGc:
      return 7;
    case OpType::kLayernormGradsAllReduce:
      return 8;
    case OpType::kEmbeddingGradsAllReduce:
      return 9;
    case OpType::kGradsReduceScatter:
      return 10;
    case OpType::kSeparateGradsAllReduce:
      return 11;
    case OpType::kOptimizerClipMainGrad:
      return 12;
    default:
      return 13;  // optimizer
  }
}

bool IsComm(Kind kind) { return kind != Kind::kCompute && kind != Kind::kGc; }

// The grad-norm all-reduce sums one float; every other collective is bf16.
bool IsFloat(OpType type) { return type == OpType::kOptimizerClipMainGrad; }

std::string_view NcclKernelName(Kind kind, bool f32, NcclKernelNames names) {
  std::optional<OpType> collective;  // SendRecv: none
  switch (kind) {
    case Kind::kAllGather:
      collective = OpType::kAllGather;
      break;
    case Kind::kReduceScatter:
      collective = OpType::kReduceScatter;
      break;
    case Kind::kSend:
    case Kind::kRecv:
      break;
    default:
      collective = OpType::kAllReduce;
      break;
  }
  const bool fp32 = f32 && collective == OpType::kAllReduce;
  for (const kineto::NcclKernelSpelling& k : kineto::kNcclKernelSpellings) {
    if (k.collective == collective && k.f32 == fp32) {
      return names == NcclKernelNames::kNew ? k.since_2_19 : k.before_2_19;
    }
  }
  return kineto::kNcclKernelSpellings[0].since_2_19;  // not reached
}

// Plausible kernels of a transformer layer; a compute op split into several
// kernels cycles through them.
std::string_view ComputeKernelName(OpType type, int32_t piece) {
  static constexpr std::string_view kForward[] = {
      "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn",
      "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, "
      "false, cutlass::bfloat16_t> >(Flash_fwd_params)",
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2> >(int, "
      "at::detail::Array<char*, 2>)"};
  static constexpr std::string_view kBackward[] = {
      "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nt",
      "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_"
      "traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t> "
      ">(Flash_bwd_params)",
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::GeluBackwardCUDAKernelImpl, at::detail::Array<char*, 3> "
      ">(int, at::detail::Array<char*, 3>)"};
  const auto k = static_cast<size_t>(piece) % 3;
  if (type == OpType::kForwardCompute) return kForward[k];
  if (type == OpType::kBackwardCompute) return kBackward[k];
  return "void multi_tensor_apply_kernel<TensorListMetadata<4>, "
         "AdamFunctor<float> >(long, int volatile*, TensorListMetadata<4>, "
         "AdamFunctor<float>)";
}

std::string_view ComputeOpName(OpType type, int32_t piece) {
  static constexpr std::string_view kForward[] = {
      "aten::linear", "aten::_flash_attention_forward", "aten::gelu"};
  static constexpr std::string_view kBackward[] = {
      "aten::mm", "aten::_flash_attention_backward", "aten::gelu_backward"};
  const auto k = static_cast<size_t>(piece) % 3;
  if (type == OpType::kForwardCompute) return kForward[k];
  if (type == OpType::kBackwardCompute) return kBackward[k];
  return "aten::_fused_adam_";
}


Message MessageOf(OpType type, Kind kind, int64_t group_size) {
  constexpr int64_t kShard = 16'777'216;  // DP shard of the grads / params
  switch (kind) {
    case Kind::kSend:
      return {"send", 8'388'608, 8'388'608};
    case Kind::kRecv:
      return {"recv", 8'388'608, 8'388'608};
    case Kind::kAllGather:
      return {"_allgather_base", kShard, kShard * group_size};
    case Kind::kReduceScatter:
      return {"_reduce_scatter_base", kShard * group_size, kShard};
    default:
      break;
  }
  switch (type) {
    case OpType::kLayernormGradsAllReduce:
      return {"allreduce", 131'072, 131'072};
    case OpType::kEmbeddingGradsAllReduce:
      return {"allreduce", 67'108'864, 67'108'864};
    case OpType::kOptimizerClipMainGrad:
      return {"allreduce", 1, 1};
    default:
      return {"allreduce", kShard * group_size, kShard * group_size};
  }
}

void AppendInt(std::string* out, int64_t value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out->append(buf, result.ptr);
}

// Nanoseconds as microseconds with exactly three decimals: exact.
void AppendUs(std::string* out, int64_t ns) {
  if (ns < 0) {
    out->push_back('-');
    ns = -ns;
  }
  AppendInt(out, ns / 1000);
  const int64_t frac = ns % 1000;
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out->append(digits, 4);
}

// "[0, 4, 8]"; with `limit`, at most that many ranks then ", ...".
std::string RanksText(const std::vector<int32_t>& ranks, size_t limit) {
  std::string text = "[";
  for (size_t i = 0; i < ranks.size() && i < limit; ++i) {
    if (i > 0) text += ", ";
    AppendInt(&text, ranks[i]);
  }
  return text + (ranks.size() > limit ? ", ...]" : "]");
}

}  // namespace strag::ingest::kineto_export
