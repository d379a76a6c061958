// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/input_size.h"

#include <gtest/gtest.h>

#include <vector>

namespace strag::graph {
namespace {

// One rank's trace with two steps of 1 ms each; per step an embedding of a
// fixed table over [2, tokens] ids and a linear over [2, tokens, 64].
trace::RankTrace Rank(int32_t rank, std::vector<int64_t> tokens) {
  trace::RankTrace t;
  t.rank = rank;
  t.names = {"aten::embedding", "aten::linear"};
  auto op = [&](int64_t ts, uint32_t name, std::vector<int64_t> numels) {
    t.input_shapes.push_back({ts, name,
                              static_cast<uint32_t>(t.input_numels.size()),
                              static_cast<uint32_t>(numels.size())});
    t.input_numels.insert(t.input_numels.end(), numels.begin(), numels.end());
  };
  for (size_t s = 0; s < tokens.size(); ++s) {
    const auto start = static_cast<int64_t>(s) * 1'000'000;
    t.steps.push_back({static_cast<int64_t>(s) + 1, start, start + 900'000});
    op(start + 10, 0, {1000 * 64, 2 * tokens[s]});
    op(start + 20, 1, {2 * tokens[s] * 64, 64 * 64, -1});
    op(start + 30, 1, {2 * tokens[s] * 64, 64 * 64, -1});
  }
  op(950'000, 0, {1000 * 64, 999'999});  // between steps: not counted
  return t;
}

GenericModel Model() {
  GenericModel m;
  m.ranks = {0, 1};
  m.steps = {1, 2};
  return m;
}

TEST(InputSizeTest, TheSmallestVaryingInputPerStep) {
  const std::vector<trace::RankTrace> traces = {Rank(1, {300, 100}),
                                                Rank(0, {128, 512})};
  const InputSize size = MeasureInputSize(traces, Model());
  EXPECT_EQ(size.source, "aten::embedding input 2");
  // [rank index * steps + step]: rank 0 first.
  EXPECT_EQ(size.per_step, (std::vector<double>{256, 1024, 600, 200}));
}

TEST(InputSizeTest, NothingWhenNoShapeVariesOrNoneIsRecorded) {
  std::vector<trace::RankTrace> traces = {Rank(0, {128, 128}),
                                          Rank(1, {128, 128})};
  EXPECT_TRUE(MeasureInputSize(traces, Model()).per_step.empty());
  for (trace::RankTrace& t : traces) t.input_shapes.clear();
  const InputSize none = MeasureInputSize(traces, Model());
  EXPECT_TRUE(none.per_step.empty());
  EXPECT_TRUE(none.source.empty());
}

TEST(InputSizeTest, AMeasureMissingOnARankIsNotUsed) {
  std::vector<trace::RankTrace> traces = {Rank(0, {128, 512}),
                                          Rank(1, {300, 100})};
  // Rank 1 records no embedding: the linear's activations measure tokens.
  auto& t = traces[1];
  std::vector<trace::InputShape> kept;
  for (const trace::InputShape& s : t.input_shapes) {
    if (s.name == 1) kept.push_back(s);
  }
  t.input_shapes = kept;
  const InputSize size = MeasureInputSize(traces, Model());
  EXPECT_EQ(size.source, "aten::linear input 1");
  EXPECT_EQ(size.per_step,
            (std::vector<double>{2 * 256 * 64, 2 * 1024 * 64, 2 * 600 * 64,
                                 2 * 200 * 64}));
}

}  // namespace
}  // namespace strag::graph
