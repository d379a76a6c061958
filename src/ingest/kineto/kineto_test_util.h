// SPDX-License-Identifier: Apache-2.0
// A synthetic Kineto trace in the shape torch.profiler writes (CPU ops with
// args, cudaLaunchKernel calls, kernels with their args, flow events, NCCL
// collectives under c10d / record_param_comms / nccl ops, step spans,
// distributedInfo), for tests, the benchmark and the fuzz driver. Events
// average ~300 bytes. Deterministic.

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_TEST_UTIL_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_TEST_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "trace/rank_trace.h"

namespace strag::ingest::kineto {

struct SyntheticTraceSpec {
  int32_t rank = 3;
  int32_t world_size = 8;
  int64_t steps = 4;
  int64_t kernels_per_step = 20;
  int64_t kernels_per_collective = 10;  // an all-reduce every N kernels
  bool new_nccl_names = true;           // ncclDevKernel_* vs ncclKernel_*
};

// What SyntheticKinetoTrace puts in: the numbers a reader must find.
struct SyntheticTraceCounts {
  int64_t events = 0;
  int64_t gpu_ops = 0;  // kernels (collectives included)
  int64_t collectives = 0;
  int64_t launches = 0;
};

namespace synthetic_internal {

// "1712195495519689.047": microseconds with three decimals, from ns.
inline std::string Micros(int64_t ns) {
  char text[48];
  std::snprintf(text, sizeof(text), "%lld.%03lld",
                static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return text;
}

inline std::string Complete(const std::string& cat, const std::string& name,
                            int64_t pid, int64_t tid, int64_t ts, int64_t dur,
                            const std::string& args) {
  return "{\n    \"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
         "\", \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(tid) + ",\n    \"ts\": " + Micros(ts) +
         ", \"dur\": " + Micros(dur) + ",\n    \"args\": {\n      " + args +
         "\n    }\n  }";
}

inline std::string Flow(char ph, int64_t id, int64_t pid, int64_t tid,
                        int64_t ts) {
  return std::string("{\n    \"ph\": \"") + ph +
         "\", \"id\": " + std::to_string(id) +
         ", \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(tid) + ", \"ts\": " + Micros(ts) +
         ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"" +
         (ph == 'f' ? ", \"bp\": \"e\"" : "") + "\n  }";
}

}  // namespace synthetic_internal

inline std::string SyntheticKinetoTrace(
    const SyntheticTraceSpec& spec, SyntheticTraceCounts* counts = nullptr) {
  using synthetic_internal::Complete;
  using synthetic_internal::Flow;
  SyntheticTraceCounts n;
  const int64_t pid = 4242;
  const int64_t main_tid = 4242;
  std::string events;
  events.reserve(static_cast<size_t>(spec.steps * spec.kernels_per_step) *
                 1100);
  const auto add = [&](const std::string& event) {
    if (n.events++ > 0) events += ",\n  ";
    events += event;
  };
  int64_t t = int64_t{1212075548353} * 1000 + 47;  // ns after the base
  int64_t correlation = 1000;
  // Deterministic jitter, so that the text compresses like a real trace
  // (about 10:1) rather than like a repeated template.
  uint64_t lcg = 12345;
  const auto jitter = [&lcg](int64_t range) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((lcg >> 33) % static_cast<uint64_t>(range));
  };
  static const char* const kKernels[] = {
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_"
      "align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)",
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
      "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
      "ampere_sgemm_128x64_tn",
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, "
      "float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>"
      "(float*, float const*, int)",
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
      "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
      "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
      "unsigned int, float, 4> >(at::native::ReduceOp<float, "
      "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
      "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
      "unsigned int, float, 4>)"};
  static const char* const kOps[] = {"aten::mm", "aten::add", "aten::addmm",
                                     "aten::_softmax", "aten::sum"};
  int64_t external = 1;
  int64_t seq = 0;
  for (int64_t step = 0; step < spec.steps; ++step) {
    const int64_t step_start = t;
    const int64_t step_dur = spec.kernels_per_step * 40'000 + 5'000;
    add(Complete("user_annotation", "ProfilerStep#" + std::to_string(step + 1),
                 pid, main_tid, step_start, step_dur,
                 "\"External id\": " + std::to_string(external++) +
                     ", \"Record function id\": 0, \"Ev Idx\": 0"));
    t += 1'000;
    for (int64_t k = 0; k < spec.kernels_per_step; ++k) {
      const bool collective = spec.kernels_per_collective > 0 &&
                              (k + 1) % spec.kernels_per_collective == 0;
      const int64_t c = correlation++;
      const int64_t op_start = t;
      std::string kernel_name;
      std::string kernel_args;
      int64_t stream = 7;
      if (collective) {
        const std::string comm_args =
            "\"Collective name\": \"allreduce\", \"dtype\": \"Float\", "
            "\"In msg nelems\": 2049000, \"Out msg nelems\": 2049000, "
            "\"Group size\": " +
            std::to_string(spec.world_size) +
            ", \"Process Group Name\": \"0\", \"Process Group Description\": "
            "\"default_pg\", \"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, "
            "7]\", \"Seq\": " +
            std::to_string(seq++);
        add(Complete("cpu_op", "c10d::allreduce_", pid, main_tid, t, 30'000,
                     "\"External id\": " + std::to_string(external++)));
        add(Complete("cpu_op", "record_param_comms", pid, main_tid, t + 1'000,
                     28'000, comm_args));
        add(Complete("user_annotation", "nccl:all_reduce", pid, main_tid,
                     t + 2'000, 26'000, "\"External id\": 0"));
        kernel_name = spec.new_nccl_names
                          ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL("
                            "ncclDevKernelArgsStorage<4096ul>)"
                          : "ncclKernel_AllReduce_RING_LL_Sum_float("
                            "ncclDevComm*, unsigned long, ncclWork*)";
        kernel_args = comm_args + ", ";
        stream = 20;
        ++n.collectives;
      } else {
        const int64_t kind = jitter(5);
        add(Complete(
            "cpu_op", kOps[kind], pid, main_tid, t, 25'000 + jitter(9'000),
            "\"External id\": " + std::to_string(external++) +
                ", \"Record function id\": 0, \"Concrete Inputs\": "
                "[\"\", \"\"], \"Input type\": [\"float\", \"float\"], "
                "\"Input Dims\": [[" +
                std::to_string(8 << jitter(8)) + ", 512], [512, " +
                std::to_string(64 << jitter(6)) +
                "]], \"Ev Idx\": " + std::to_string(n.events)));
        kernel_name = kKernels[kind];
      }
      const int64_t launch = op_start + 15'000 + jitter(5'000);
      add(Complete(
          "cuda_runtime", "cudaLaunchKernel", pid, main_tid, launch, 5'000,
          "\"External id\": " + std::to_string(external) +
              ", \"cbid\": 211, \"correlation\": " + std::to_string(c)));
      add(Flow('s', c, pid, main_tid, launch));
      const int64_t kernel_start = launch + 5'000 + jitter(20'000);
      add(Complete(
          "kernel", kernel_name, 0, stream, kernel_start,
          2'000 + jitter(15'000),
          kernel_args + "\"External id\": " + std::to_string(external) +
              ", \"queued\": 0, \"device\": 0, \"context\": 1, "
              "\"stream\": " +
              std::to_string(stream) + ", \"correlation\": " +
              std::to_string(c) + ", \"registers per thread\": " +
              std::to_string(32 + 8 * jitter(20)) + ", \"shared memory\": " +
              std::to_string(1024 * jitter(64)) + ", \"blocks per SM\": 0." +
              std::to_string(100000 + jitter(899999)) +
              ", \"warps per SM\": " + std::to_string(jitter(9)) + "." +
              std::to_string(100000 + jitter(899999)) + ", \"grid\": [" +
              std::to_string(1 + jitter(512)) + ", " +
              std::to_string(1 + jitter(4)) + ", 1], \"block\": [" +
              std::to_string(32 << jitter(5)) +
              ", 1, 1], \"est. achieved occupancy %\": " +
              std::to_string(jitter(100))));
      add(Flow('f', c, 0, stream, kernel_start));
      ++n.gpu_ops;
      ++n.launches;
      t += 40'000;
    }
    t = step_start + step_dur + 2'000;
  }
  std::string ranks;
  for (int32_t r = 0; r < spec.world_size; ++r) {
    ranks += (r > 0 ? ", " : "") + std::to_string(r);
  }
  std::string json =
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\"id\": 0, "
      "\"name\": \"NVIDIA H100\", \"totalGlobalMem\": 85045010432}\n  ],\n"
      "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " +
      std::to_string(spec.rank) +
      ", \"world_size\": " + std::to_string(spec.world_size) +
      ", \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": "
      "\"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": " +
      std::to_string(spec.world_size) + ", \"ranks\": [" + ranks +
      "]}], \"nccl_version\": \"2.21.5\"},\n  \"traceEvents\": [\n  ";
  json += events;
  json +=
      "\n  ],\n  \"traceName\": \"/tmp/trace.json\",\n  \"displayTimeUnit\": "
      "\"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n";
  if (counts != nullptr) *counts = n;
  return json;
}

// An adversarial GPU trace: `depth` record_param_comms ops nested inside
// each other on one thread (op k spans [k + 1, 2 depth - k + 1] us), each
// launching one NCCL kernel: the even ones just after their start, the odd
// ones just before their end (there, the last op that starts before the
// launch is the innermost one, depth - k levels below). Quadratic work per
// nest level shows at once (issue 11: 25k levels took 16 s). ~330 bytes
// per level.
inline std::string DeepCommNestTrace(int64_t depth) {
  std::string json =
      "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 1},\n"
      "\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", "
      "\"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 0, "
      "\"dur\": " +
      std::to_string(4 * depth + 10) + "}";
  json.reserve(static_cast<size_t>(depth) * 340 + json.size() + 8);
  for (int64_t k = 0; k < depth; ++k) {
    const int64_t ts = k + 1;
    const int64_t end = 2 * depth - k + 1;
    const std::string launch =
        k % 2 == 0 ? std::to_string(ts) + ".5" : std::to_string(end - 1) + ".5";
    const std::string c = std::to_string(k);
    json +=
        ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"
        "\"record_param_comms\",\"pid\":1,\"tid\":1,\"ts\":" +
        std::to_string(ts) + ",\"dur\":" + std::to_string(end - ts) +
        ",\"args\":{\"Collective name\":\"allreduce\",\"Seq\":" + c +
        "}},\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
        "\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" +
        launch + ",\"dur\":0.1,\"args\":{\"correlation\":" + c +
        "}},\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
        "\"ncclDevKernel_Generic\",\"pid\":0,\"tid\":7,\"ts\":" +
        std::to_string(4 * depth + k) +
        ",\"dur\":0.5,\"args\":{\"stream\":7,\"correlation\":" + c + "}}";
  }
  json += "]}\n";
  return json;
}

// Empty when `a` and `b` hold the same data, else the first field that
// differs.
inline std::string RankTraceDifference(const trace::RankTrace& a,
                                       const trace::RankTrace& b) {
  const auto same_groups = [&] {
    if (a.groups.size() != b.groups.size()) return false;
    for (size_t i = 0; i < a.groups.size(); ++i) {
      if (a.groups[i].name != b.groups[i].name ||
          a.groups[i].desc != b.groups[i].desc ||
          a.groups[i].ranks != b.groups[i].ranks) {
        return false;
      }
    }
    return true;
  };
  const auto same_steps = [&] {
    if (a.steps.size() != b.steps.size()) return false;
    for (size_t i = 0; i < a.steps.size(); ++i) {
      if (a.steps[i].id != b.steps[i].id ||
          a.steps[i].start_ns != b.steps[i].start_ns ||
          a.steps[i].end_ns != b.steps[i].end_ns) {
        return false;
      }
    }
    return true;
  };
  const auto same_comms = [&] {
    if (a.comms.size() != b.comms.size()) return false;
    for (size_t i = 0; i < a.comms.size(); ++i) {
      const trace::CommOp& x = a.comms[i];
      const trace::CommOp& y = b.comms[i];
      if (x.kind != y.kind || x.group != y.group || x.seq != y.seq ||
          x.in_nelems != y.in_nelems || x.out_nelems != y.out_nelems ||
          x.group_size != y.group_size || x.peer != y.peer) {
        return false;
      }
    }
    return true;
  };
  if (a.source != b.source) return "source";
  if (a.rank != b.rank || a.world_size != b.world_size) return "rank";
  if (a.backend != b.backend || a.cpu_only != b.cpu_only) return "backend";
  if (!same_groups()) return "groups";
  if (!same_steps()) return "steps";
  if (a.start_ns != b.start_ns || a.dur_ns != b.dur_ns) return "times";
  if (a.launch_ns != b.launch_ns) return "launch_ns";
  if (a.stream != b.stream || a.comm != b.comm) return "stream / comm";
  if (a.name != b.name || a.names != b.names) return "names";
  if (a.launch_op != b.launch_op) return "launch_op";
  if (!same_comms()) return "comms";
  const auto same_shapes = [&] {
    if (a.input_shapes.size() != b.input_shapes.size()) return false;
    for (size_t i = 0; i < a.input_shapes.size(); ++i) {
      const trace::InputShape& x = a.input_shapes[i];
      const trace::InputShape& y = b.input_shapes[i];
      if (x.start_ns != y.start_ns || x.name != y.name || x.first != y.first ||
          x.count != y.count) {
        return false;
      }
    }
    return a.input_numels == b.input_numels;
  };
  if (!same_shapes()) return "input shapes";
  if (a.events != b.events || a.skipped != b.skipped) return "skipped";
  if (a.warnings != b.warnings) return "warnings";
  return "";
}

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_TEST_UTIL_H_
