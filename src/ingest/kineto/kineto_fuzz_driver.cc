// SPDX-License-Identifier: Apache-2.0
// A bounded fuzz run of kineto_reader_fuzzer.cc without libFuzzer (GCC,
// ASan / UBSan builds; common/fuzz_driver.h): seeded mutations of seed
// traces, for at most --seconds or --iterations, under --rss_limit_mb.
// Deterministic for a --seed; prints what it ran. The ctest
// kineto_reader_fuzz.
//
// The seeds include one input of each resource case of issue 11, made
// here (none is committed): gzip bombs (NULs, whitespace between events),
// a huge string event and a huge top-level string, deep comm nests, a
// UTF-8 byte order mark, a world of 10^9 ranks, binary bytes between
// events.

#include <string>
#include <vector>

#include "ingest/common/fuzz_driver.h"
#include "ingest/common/gzip.h"
#include "ingest/kineto/kineto_test_util.h"

extern bool kineto_fuzz_last_parsed;

namespace {

using strag::ingest::kineto::DeepCommNestTrace;
using strag::ingest::kineto::SyntheticKinetoTrace;
using strag::ingest::kineto::SyntheticTraceSpec;

std::string Gzip(const std::string& text) {
  const auto gz = strag::ingest::GzipCompress(text);
  return gz.ok() ? *gz : text;
}

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
  const std::string gloo =
      R"({"distributedInfo": {"backend": "gloo", "rank": 1, "world_size": 2, "pg_config": [{"pg_name": "0", "ranks": [0, 1]}]},
"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 7, "tid": 9, "ts": 1.5e3, "dur": "12.25", "args": {"Ev Idx": 0}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 7, "tid": 7, "ts": 1000.001, "dur": 99},
{"ph": "X", "cat": "cpu_op", "name": "a \"q\" {b} [c] \\", "pid": 7, "tid": 7, "ts": 1001, "dur": -1},
{"name": "thread_name", "ph": "M", "pid": 7, "tid": 9, "args": {"name": "x"}}, 5, "s", null],
"displayTimeUnit": "ns", "baseTimeNanoseconds": 1719853884000000000})";
  seeds.push_back(gloo);
  // The resource cases (issue 11), at a size the fuzz target's small
  // limits (kineto_reader_fuzzer.cc) refuse and its default ones take.
  seeds.push_back(Gzip(std::string(size_t{8} << 20, '\0')));  // a NUL bomb
  seeds.push_back(
      Gzip("{\"traceEvents\": [" + std::string(size_t{8} << 20, ' ') + "]}"));
  seeds.push_back("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"" +
                  std::string(200000, 'a') + "\"}]}");
  seeds.push_back("{\"traceName\": \"" + std::string(200000, 'b') +
                  "\", \"traceEvents\": []}");
  seeds.push_back("{\"traceEvents\": [{\"ph\": \"X\"}, \n" +
                  std::string(5000, ' ') + std::string(64, '\0') + "]}");
  seeds.push_back(DeepCommNestTrace(2000));
  seeds.push_back("\xef\xbb\xbf" + gloo);  // a UTF-8 byte order mark
  std::string world = gloo;
  world.replace(world.find("\"world_size\": 2"), 15,
                "\"world_size\": 1000000000");
  world.replace(world.find("\"rank\": 1"), 9, "\"rank\": 999999999");
  seeds.push_back(world);
  return seeds;
}

}  // namespace

int main(int argc, char** argv) {
  return strag::ingest::fuzz::RunFuzzDriver(
      argc, argv, "kineto", Seeds(), "{}[]\",:\\0123456789.-eE \n\x1f\x8b\xef",
      &kineto_fuzz_last_parsed);
}
