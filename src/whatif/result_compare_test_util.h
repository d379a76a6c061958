// SPDX-License-Identifier: Apache-2.0
// ExpectSameResult: two WhatIfResults equal bit for bit (per-step series,
// means, decompositions, worker scores, counterfactuals, ideal values), for
// the tests of the analysis in windows, shared by processes, or read by
// several processes (load/).
#ifndef STRAG_SRC_WHATIF_RESULT_COMPARE_TEST_UTIL_H_
#define STRAG_SRC_WHATIF_RESULT_COMPARE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "whatif/analysis.h"

namespace strag::whatif {

inline bool Same(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}
inline bool Same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!Same(a[k], b[k])) return false;
  }
  return true;
}
inline bool Same(const Decomposition& a, const Decomposition& b) {
  if (a.keys != b.keys || !Same(a.slowdown, b.slowdown) ||
      a.per_step.size() != b.per_step.size()) {
    return false;
  }
  for (size_t k = 0; k < a.per_step.size(); ++k) {
    if (!Same(a.per_step[k], b.per_step[k])) return false;
  }
  return true;
}
inline bool Same(const Counterfactual& a, const Counterfactual& b) {
  return a.selector == b.selector && a.unfix == b.unfix && a.ranks == b.ranks &&
         Same(a.t_ori, b.t_ori) && Same(a.t_ideal, b.t_ideal) &&
         Same(a.t_rem, b.t_rem) && Same(a.t_add, b.t_add) &&
         Same(a.rem, b.rem) && Same(a.add, b.add);
}

inline void ExpectSameResult(const WhatIfResult& a, const WhatIfResult& b) {
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_TRUE(Same(a.step_t_observed, b.step_t_observed));
  EXPECT_TRUE(Same(a.step_t_replayed, b.step_t_replayed));
  EXPECT_TRUE(Same(a.step_t_ideal, b.step_t_ideal));
  EXPECT_TRUE(Same(a.slowdown, b.slowdown)) << a.slowdown << " " << b.slowdown;
  EXPECT_TRUE(Same(a.waste, b.waste));
  EXPECT_TRUE(Same(a.launch_slowdown, b.launch_slowdown));
  EXPECT_TRUE(Same(a.slowdown_per_step, b.slowdown_per_step));
  EXPECT_TRUE(Same(a.launch_slowdown_per_step, b.launch_slowdown_per_step));
  EXPECT_TRUE(Same(a.by_optype, b.by_optype));
  EXPECT_TRUE(Same(a.by_dp_rank, b.by_dp_rank));
  EXPECT_TRUE(Same(a.by_stage, b.by_stage));
  EXPECT_TRUE(Same(a.by_pipeline_stage, b.by_pipeline_stage));
  ASSERT_EQ(a.workers.size(), b.workers.size());
  for (size_t k = 0; k < a.workers.size(); ++k) {
    EXPECT_EQ(a.workers[k].rank, b.workers[k].rank) << k;
    EXPECT_TRUE(Same(a.workers[k].score, b.workers[k].score)) << k;
    EXPECT_TRUE(Same(a.workers[k].unfix_slowdown, b.workers[k].unfix_slowdown))
        << "worker " << a.workers[k].rank;
  }
  EXPECT_TRUE(Same(a.fix_worst_workers, b.fix_worst_workers));
  EXPECT_TRUE(Same(a.fix_last_stage, b.fix_last_stage));
  ASSERT_EQ(a.selected.size(), b.selected.size());
  for (size_t k = 0; k < a.selected.size(); ++k) {
    EXPECT_TRUE(Same(a.selected[k], b.selected[k])) << a.selected[k].selector;
  }
  EXPECT_TRUE(Same(a.ideal_node_cost, b.ideal_node_cost));
  ASSERT_EQ(a.ideal.size(), b.ideal.size());
  for (size_t k = 0; k < a.ideal.size(); ++k) {
    EXPECT_EQ(a.ideal[k].op_type, b.ideal[k].op_type);
    EXPECT_TRUE(Same(a.ideal[k].value_s, b.ideal[k].value_s));
  }
  EXPECT_TRUE(Same(a.self_test_max_error_s, b.self_test_max_error_s));
}

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_RESULT_COMPARE_TEST_UTIL_H_
