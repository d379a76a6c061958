// SPDX-License-Identifier: Apache-2.0
// A bounded fuzz run of kineto_reader_fuzzer.cc without libFuzzer (GCC,
// ASan / UBSan builds): seeded mutations (bit flips, structural bytes,
// deletions, duplications, splices between traces, truncations, gzip) of a
// few seed traces, for at most --seconds or --iterations. Deterministic
// for a --seed; prints what it ran. The ctest kineto_reader_fuzz.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ingest/common/gzip.h"
#include "ingest/kineto/kineto_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern bool kineto_fuzz_last_parsed;

namespace {

using strag::ingest::kineto::SyntheticKinetoTrace;
using strag::ingest::kineto::SyntheticTraceSpec;

std::vector<std::string> Seeds() {
  SyntheticTraceSpec spec;
  spec.steps = 2;
  spec.kernels_per_step = 4;
  spec.kernels_per_collective = 2;
  std::vector<std::string> seeds = {SyntheticKinetoTrace(spec)};
  spec.new_nccl_names = false;
  spec.steps = 1;
  seeds.push_back(SyntheticKinetoTrace(spec));
  seeds.push_back(
      R"([{"name": "ProfilerStep#1", "ph": "X", "ts": 387, "dur": 19556, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "aten::linear", "ph": "X", "ts": 801, "dur": 2806, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "c10d::allreduce_", "ph": "X", "ts": 8362, "dur": 847, "tid": 1, "pid": "CPU functions", "args": {}},
{"name": "gloo:all_reduce", "ph": "X", "ts": 8447, "dur": 10998, "tid": 3, "pid": "CPU functions", "args": {}}])");
  seeds.push_back(
      R"({"distributedInfo": {"backend": "gloo", "rank": 1, "world_size": 2, "pg_config": [{"pg_name": "0", "ranks": [0, 1]}]},
"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 7, "tid": 9, "ts": 1.5e3, "dur": "12.25", "args": {"Ev Idx": 0}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 7, "tid": 7, "ts": 1000.001, "dur": 99},
{"ph": "X", "cat": "cpu_op", "name": "a \"q\" {b} [c] \\", "pid": 7, "tid": 7, "ts": 1001, "dur": -1},
{"name": "thread_name", "ph": "M", "pid": 7, "tid": 9, "args": {"name": "x"}}, 5, "s", null],
"displayTimeUnit": "ns", "baseTimeNanoseconds": 1719853884000000000})");
  return seeds;
}

// One mutation of `s`, drawing from `other` for splices.
void Mutate(std::string* s, const std::string& other, std::mt19937_64* random) {
  static const char kBytes[] = "{}[]\",:\\0123456789.-eE \n\x1f\x8b";
  auto pick = [&](size_t n) { return n == 0 ? 0 : (*random)() % n; };
  const size_t at = pick(s->size() + 1);
  switch ((*random)() % 7) {
    case 0:
      if (!s->empty()) (*s)[pick(s->size())] ^= static_cast<char>(1 << pick(8));
      break;
    case 1:
      if (!s->empty()) (*s)[pick(s->size())] = kBytes[pick(sizeof(kBytes) - 1)];
      break;
    case 2:
      s->erase(at, 1 + pick(40));
      break;
    case 3:
      s->insert(at, s->substr(pick(s->size() + 1), 1 + pick(80)));
      break;
    case 4:
      s->insert(at, other.substr(pick(other.size() + 1), 1 + pick(200)));
      break;
    case 5:
      s->resize(at);
      break;
    default:
      s->insert(at, 1, kBytes[pick(sizeof(kBytes) - 1)]);
      break;
  }
}

long Flag(int argc, char** argv, const char* name, long fallback) {
  const size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
      return std::strtol(argv[i] + n + 1, nullptr, 10);
    }
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const long seconds = Flag(argc, argv, "--seconds", 15);
  const long iterations = Flag(argc, argv, "--iterations", 100000);
  std::mt19937_64 random(static_cast<uint64_t>(Flag(argc, argv, "--seed", 1)));
  std::vector<std::string> corpus = Seeds();
  const size_t seeds = corpus.size();
  const auto run = [](const std::string& input) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()),
                           input.size());
  };
  for (const std::string& seed : corpus) run(seed);
  const auto start = std::chrono::steady_clock::now();
  long done = 0;
  long parsed = 0;
  while (done < iterations && std::chrono::steady_clock::now() - start <
                                  std::chrono::seconds(seconds)) {
    std::string input = corpus[random() % corpus.size()];
    const std::string& other = corpus[random() % corpus.size()];
    for (int m = 0, n = 1 + static_cast<int>(random() % 4); m < n; ++m) {
      Mutate(&input, other, &random);
    }
    if (random() % 16 == 0) {
      const auto gz = strag::ingest::GzipCompress(input);
      if (gz.ok())
        input = random() % 2 ? *gz : gz->substr(0, random() % (gz->size() + 1));
    }
    run(input);
    parsed += kineto_fuzz_last_parsed ? 1 : 0;
    // Inputs that still parse go on being mutated; the others seldom.
    if ((kineto_fuzz_last_parsed || random() % 64 == 0) &&
        input.size() < 20000) {
      if (corpus.size() < 256) {
        corpus.push_back(input);
      } else {
        corpus[seeds + random() % (corpus.size() - seeds)] = input;
      }
    }
    ++done;
  }
  std::printf("kineto fuzz: %ld inputs (%ld parsed), no failure\n", done,
              parsed);
  return 0;
}
