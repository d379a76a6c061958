// SPDX-License-Identifier: Apache-2.0
// IdealPools: the pooled ideal value of every op (whatif-spec.md §6.2),
// gathered window by window.
//
// Compute types take the mean of their no-delay durations D_nd, the
// communication class the median (transfer times of comm ops, rounded to
// binary32), each pooled per op type (published), type and stage, op, or
// position. The pools are ordered node by node (every instance of a node,
// then the next node), as the published tool's numpy means sum them: means
// go through PairwiseSumAccumulator, so a job added a few steps at a time
// gets the same bits as the whole job at once. Medians keep their values
// (as binary32 while every value is one: 4 bytes per comm op).

#ifndef STRAG_SRC_WHATIF_IDEAL_POOLS_H_
#define STRAG_SRC_WHATIF_IDEAL_POOLS_H_

#include <cstddef>
#include <span>
#include <vector>

#include "base/byte_pack.h"
#include "base/pairwise_sum.h"
#include "base/status.h"
#include "whatif/prepared_trace.h"

namespace strag::whatif {

// Over which rows an op's ideal value is pooled. The published method pools
// per op type over everything, so a stage that is heavier by design counts as
// a straggler; the finer pools do not.
enum class IdealPool {
  kOpType,       // per op type (published)
  kOpTypeStage,  // per op type and stage
  kOp,           // per op (type, seq_id, stage): over steps and DP ranks
  kPosition,     // per (type, seq_id): over steps, DP ranks and stages; for
                 // Layout::kRanks, the same position of the step on every rank
  kRole,         // Layout::kRanks: the same position on the ranks of one
                 // stage, outliers left out, stages evened (robust_ideal.h)
};

// The values of a median pool, in any order; binary32 while they all are.
class MedianValues {
 public:
  void Add(double x);
  // Median (base/median.h's: the mean of the two middle values for an even
  // count, 0 when empty). Reorders the values.
  double Take();
  // The values so far, to merge into another pool (the median of the
  // union is the median of every value, in whatever order they came).
  void Export(BytePacker* out) const;
  Status Merge(ByteUnpacker* in);

 private:
  std::vector<float> f32_;
  std::vector<double> f64_;
  bool wide_ = false;
};

class IdealPools {
 public:
  // `shape`: the job's model and instance count (per-slot arrays unused).
  // `pool` must not be kRole (that one needs the whole trace).
  IdealPools(const PreparedTrace& shape, IdealPool pool);

  // The no-delay costs of `window`'s slots ([node * window instances +
  // instance]); its instances are the job's [first_instance, ...).
  void Add(const PreparedTrace& window, size_t first_instance,
           std::span<const double> cost_nd);

  // The ideal value of every node (call once, after every instance); the
  // pools' medians on `threads` threads.
  std::vector<double> NodeCosts(size_t threads = 1);

  // Every pool's state so far, to merge into the pools of the same shape
  // on another process (each adding its own instances): after b.Merge of
  // a's export, NodeCosts() is as if a's windows had been added to b.
  std::string Export() const;
  Status Merge(std::string_view bytes);

 private:
  struct Pool {
    bool median = false;  // else the mean
    std::vector<PairwiseSumAccumulator> mean;  // 0 or 1
    MedianValues values;
  };
  const PreparedTrace& shape_;
  std::vector<size_t> pool_of_;   // per node: 2 * pool + (comm ? 1 : 0)
  std::vector<size_t> position_;  // per node: its place among its pool's
  std::vector<Pool> pools_;
};

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_IDEAL_POOLS_H_
