// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_names.h"

#include <charconv>
#include <string>

namespace strag::ingest::kineto {
namespace {

using trace::OpType;

// Lower case letters and digits only: "_reduce_scatter_base" ->
// "reducescatterbase".
std::string Normalize(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    }
  }
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<OpType> CollectiveFromName(std::string_view name) {
  const std::string n = Normalize(name);
  // Longer names first: "reducescatter" before "reduce", "sendrecv" is
  // neither a send nor a recv.
  static constexpr struct {
    std::string_view prefix;
    OpType type;
  } kPrefixes[] = {
      {"allreduce", OpType::kAllReduce},
      {"allgather", OpType::kAllGather},
      {"reducescatter", OpType::kReduceScatter},
      {"alltoall", OpType::kAllToAll},
      {"broadcast", OpType::kBroadcast},
      {"barrier", OpType::kBarrier},
      {"monitoredbarrier", OpType::kBarrier},
  };
  for (const auto& entry : kPrefixes) {
    if (n.starts_with(entry.prefix)) return entry.type;
  }
  if (n == "reduce" || n == "reducecoalesced") return OpType::kReduce;
  if (n == "send") return OpType::kSend;
  if (n == "recv" || n == "recvanysource") return OpType::kRecv;
  return std::nullopt;
}

CpuCommFamily CpuCommFamilyOf(std::string_view name) {
  if (name == "record_param_comms") return CpuCommFamily::kRecordParamComms;
  if (name.starts_with("nccl:")) return CpuCommFamily::kNccl;
  if (name.starts_with("c10d::")) return CpuCommFamily::kC10d;
  if (name.starts_with("gloo:")) return CpuCommFamily::kGloo;
  return CpuCommFamily::kNone;
}

std::optional<OpType> CpuCommCollective(std::string_view name) {
  switch (CpuCommFamilyOf(name)) {
    case CpuCommFamily::kNccl:
    case CpuCommFamily::kGloo:
      return CollectiveFromName(name.substr(name.find(':') + 1));
    case CpuCommFamily::kC10d:
      return CollectiveFromName(name.substr(6));
    default:
      return std::nullopt;
  }
}

const NcclKernelSpelling kNcclKernelSpellings[5] = {
    {OpType::kAllReduce, false,
     "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, "
     "ncclWork*)",
     "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<"
     "4096ul>)"},
    {OpType::kAllReduce, true,
     "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, "
     "ncclWork*)",
     "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<"
     "4096ul>)"},
    {OpType::kAllGather, false,
     "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, "
     "ncclWork*)",
     "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
    {OpType::kReduceScatter, false,
     "ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned "
     "long, ncclWork*)",
     "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<"
     "4096ul>)"},
    {std::nullopt, false,
     "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, "
     "ncclWork*)",
     "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"},
};

bool IsNcclKernel(std::string_view name) {
  return name.starts_with(kNcclKernelPrefix.substr(0, 10)) ||
         name.starts_with(kNcclDevKernelPrefix.substr(0, 13));
}

std::optional<OpType> NcclKernelCollective(std::string_view name) {
  size_t begin = 0;
  if (name.starts_with(kNcclKernelPrefix)) {
    begin = kNcclKernelPrefix.size();
  } else if (name.starts_with(kNcclDevKernelPrefix)) {
    begin = kNcclDevKernelPrefix.size();
  } else {
    return std::nullopt;
  }
  const size_t end = name.find_first_of("_(", begin);
  const std::string_view kind = name.substr(begin, end - begin);
  // Only the kernels named after one collective say which it is.
  if (kind != "AllReduce" && kind != "AllGather" && kind != "ReduceScatter" &&
      kind != "Broadcast" && kind != "Reduce" && kind != "AllToAll") {
    return std::nullopt;
  }
  return CollectiveFromName(kind);
}

std::optional<int64_t> ProfilerStepId(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) {
    return std::nullopt;
  }
  int64_t id = 0;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  const auto [ptr, ec] = std::from_chars(begin, end, id);
  if (ec != std::errc() || ptr != end || !IsDigit(*begin)) return std::nullopt;
  return id;
}

std::optional<int32_t> RankFromFileName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const std::string base(
      slash == std::string_view::npos ? path : path.substr(slash + 1));
  std::string lower = base;
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  for (size_t at = lower.find("rank"); at != std::string::npos;
       at = lower.find("rank", at + 1)) {
    size_t digits = at + 4;
    if (digits < lower.size() &&
        (lower[digits] == '-' || lower[digits] == '_')) {
      ++digits;
    }
    if (digits >= lower.size() || !IsDigit(lower[digits])) continue;
    int32_t rank = 0;
    const char* begin = lower.data() + digits;
    const auto [ptr, ec] =
        std::from_chars(begin, lower.data() + lower.size(), rank);
    if (ec == std::errc()) return rank;
  }
  return std::nullopt;
}

std::optional<std::vector<int32_t>> ParseRankList(std::string_view text) {
  const auto skip_space = [&](size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    return i;
  };
  size_t i = skip_space(0);
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  std::vector<int32_t> ranks;
  i = skip_space(i + 1);
  if (i < text.size() && text[i] == ']') {
    return skip_space(i + 1) == text.size() ? std::optional(ranks)
                                            : std::nullopt;
  }
  while (i < text.size()) {
    int32_t rank = 0;
    const auto [ptr, ec] =
        std::from_chars(text.data() + i, text.data() + text.size(), rank);
    if (ec != std::errc()) return std::nullopt;
    ranks.push_back(rank);
    i = skip_space(static_cast<size_t>(ptr - text.data()));
    if (i < text.size() && text[i] == ']') {
      return skip_space(i + 1) == text.size() ? std::optional(ranks)
                                              : std::nullopt;
    }
    if (i >= text.size() || text[i] != ',') return std::nullopt;
    i = skip_space(i + 1);
  }
  return std::nullopt;
}

std::optional<trace::HostKind> HostKindOf(std::string_view name) {
  if (name.starts_with("enumerate(DataLoader)") ||
      name.find("DataLoaderIter.__next__") != std::string_view::npos) {
    return trace::HostKind::kDataLoading;
  }
  if (name == "gc" || name == "gc.collect" || name == "Python GC" ||
      name.starts_with("gc.collect") ||
      name.starts_with("<built-in method collect of module")) {
    return trace::HostKind::kGc;
  }
  return std::nullopt;
}

}  // namespace strag::ingest::kineto
