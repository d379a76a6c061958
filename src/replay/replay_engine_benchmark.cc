// SPDX-License-Identifier: Apache-2.0
// Replay throughput on a synthetic layered graph: ops x lanes per second.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "replay/replay_engine.h"

namespace strag::replay {
namespace {

// `layers` x `width` plain nodes, each depending on two nodes of the layer
// before, and every 16th node of a layer in a dp_sync group of two.
graph::DepGraph LayeredGraph(size_t layers, size_t width) {
  graph::DepGraph g(layers * width);
  for (size_t l = 1; l < layers; ++l) {
    for (size_t w = 0; w < width; ++w) {
      const auto v = static_cast<graph::NodeId>(l * width + w);
      g.AddEdge(static_cast<graph::NodeId>((l - 1) * width + w), v);
      g.AddEdge(static_cast<graph::NodeId>((l - 1) * width + (w + 1) % width),
                v);
    }
  }
  for (size_t l = 1; l < layers; ++l) {
    const auto a = static_cast<graph::NodeId>(l * width);
    (void)g.AddGroup({a, a + 1}, true);
  }
  (void)g.Finalize([](graph::NodeId v) { return std::to_string(v); });
  return g;
}

void BM_Replay(benchmark::State& state) {
  const auto lanes = static_cast<size_t>(state.range(0));
  const graph::DepGraph g = LayeredGraph(64, 16);
  std::vector<double> cost(g.num_nodes() * lanes, 1e-3);
  std::vector<uint32_t> sync;
  for (size_t l = 0; l <= lanes; l += 4)
    sync.push_back(static_cast<uint32_t>(l));
  const auto rows = DenseRows(cost, g.num_nodes(), lanes);
  const std::vector<double> values(g.num_nodes(), 0.0);
  const std::vector<graph::NodeId> optimizer = {
      static_cast<graph::NodeId>(g.num_nodes() - 1)};
  const ReplayInput in{.graph = &g,
                       .num_lanes = lanes,
                       .cost = {.rows = rows, .values = values},
                       .launch_delay = {},
                       .sync_offsets = sync,
                       .optimizer_nodes = optimizer};
  ReplayWorkspace ws;
  for (auto _ : state) {
    StepTimes t = Replay(in, &ws);
    benchmark::DoNotOptimize(t.opt.data());
  }
  state.counters["ops/s"] =
      benchmark::Counter(static_cast<double>(g.num_nodes() * lanes),
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Replay)->Arg(4)->Arg(64)->Arg(256)->Arg(2048);

}  // namespace
}  // namespace strag::replay

BENCHMARK_MAIN();
