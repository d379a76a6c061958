// SPDX-License-Identifier: Apache-2.0
// Writes the built-in example job of `make demo` (examples/demo/): a
// Megatron 1F1B job, DP 4 x PP 4 (x TP 2), 8 microbatches, 12 sampled steps,
// synthesised by the project's own replay (sim/trace_synth.h), with:
//   - one slow GPU: global rank 9 (dp 1, stage 2) computes 30% slower,
//   - a heavier last stage (the loss layer: +12% forward and backward),
//   - 2% multiplicative noise on every compute and 5% on communication.
// Deterministic: the same binary writes the same files.
//
// usage: strag_make_example OUT_DIR

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "ingest/common/gzip.h"
#include "ingest/ops_csv/ops_csv_writer.h"
#include "sim/trace_synth.h"

namespace {

using strag::trace::OpType;

// A reproducible standard normal from the op's identity (SplitMix64 hash,
// Box-Muller), so the example does not depend on library distributions.
double Normal(uint64_t key) {
  auto mix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const uint64_t a = mix(key), b = mix(a);
  const double u1 = (static_cast<double>(a >> 11) + 1.0) / 9007199254740993.0;
  const double u2 = static_cast<double>(b >> 11) / 9007199254740992.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

double Cost(const strag::sim::SynthOp& op) {
  const uint64_t key = (static_cast<uint64_t>(op.step) << 40) ^
                       (static_cast<uint64_t>(op.dp) << 32) ^
                       (static_cast<uint64_t>(op.stage) << 24) ^
                       (static_cast<uint64_t>(op.type) << 16) ^
                       static_cast<uint64_t>(op.seq_id);
  const double noise = Normal(key);
  const bool slow_gpu = op.dp == 1 && op.stage == 2;
  const bool last_stage = op.stage == 3;
  double compute = 1.0 + 0.02 * noise;
  if (slow_gpu) compute *= 1.30;
  if (last_stage) compute *= 1.12;
  const double comm = std::exp(0.05 * noise);
  switch (op.type) {
    case OpType::kForwardCompute:
      return 0.010 * compute;
    case OpType::kBackwardCompute:
      return 0.020 * compute;
    case OpType::kForwardSend:
    case OpType::kForwardRecv:
    case OpType::kBackwardSend:
    case OpType::kBackwardRecv:
      return 0.0002 * comm;
    case OpType::kParamsAllGather:
      return 0.005 * comm;
    case OpType::kGradsReduceScatter:
      return 0.008 * comm;
    case OpType::kSeparateGradsAllReduce:
      return 0.008 * comm;
    case OpType::kLayernormGradsAllReduce:
      return 0.0005 * comm;
    case OpType::kEmbeddingGradsAllReduce:
      return 0.001 * comm;
    case OpType::kOptimizerClipMainGrad:
      return 0.0001 * comm;
    case OpType::kOptimizer:
      return 0.003 * compute;
    case OpType::kGc:
      return 0.0;
    default:  // generic types: not in a Megatron op table
      return 0.0;
  }
}

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: strag_make_example OUT_DIR\n", stderr);
    return 2;
  }
  const std::string dir = argv[1];
  strag::sim::SynthJob job{.dp = 4, .pp = 4, .microbatches = 8, .steps = {}};
  for (int64_t s = 0; s < 12; ++s) job.steps.push_back(100 + 10 * s);
  auto table = strag::sim::SynthesizeTrace(job, Cost);
  if (!table.ok()) {
    std::fprintf(stderr, "error: %s\n", table.status().message().c_str());
    return 1;
  }
  auto gz = strag::ingest::GzipCompress(strag::ingest::WriteOpsCsv(*table));
  if (!gz.ok()) return 1;
  const std::string meta =
      "# The built-in example job (tools/make_example.cc).\n"
      "trial_name: demo\n"
      "dp_size: 4\n"
      "pp_size: 4\n"
      "tp_size: 2\n"
      "dsp_size: 1\n"
      "vpp_size: 1\n"
      "world_size: 32\n";
  if (!Write(dir + "/trace-demo.csv.gz", *gz) ||
      !Write(dir + "/meta-demo.yaml", meta)) {
    std::fprintf(stderr, "error: cannot write to %s\n", dir.c_str());
    return 1;
  }
  std::printf("wrote %s/trace-demo.csv.gz (%zu ops) and meta-demo.yaml\n",
              dir.c_str(), table->size());
  return 0;
}
