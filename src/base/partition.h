// SPDX-License-Identifier: Apache-2.0
// Number partitioning: the algorithms of the planner's balancing policies
// and of the simulator's balanced sequences (multiway partitioning, chains
// on chains, min-max unit allocation). Pure functions over costs.

#ifndef STRAG_SRC_BASE_PARTITION_H_
#define STRAG_SRC_BASE_PARTITION_H_

#include <cstdint>
#include <span>
#include <vector>

namespace strag {

// Items split into k bins.
struct Partition {
  std::vector<int32_t> bin;  // per item: its bin
  std::vector<double> load;  // per bin: the sum of its items
  double makespan = 0;       // max load
  double lower_bound = 0;    // max(sum / k, max item): no split does better
  // achieved / lower bound - 1: how far from optimal at most.
  double Gap() const {
    return lower_bound > 0 ? makespan / lower_bound - 1 : 0;
  }
};

// Longest processing time first (Graham): items by cost, descending, each
// to the least loaded bin. O(n log n + n log k). Ties go to the lower bin.
Partition LptPartition(std::span<const double> cost, int32_t k);

// Karmarkar-Karp largest differencing, k-way: every item a k-tuple, the two
// tuples of largest spread merged (largest subset with smallest) until one
// is left. O(n log n + n k log k).
Partition KarmarkarKarp(std::span<const double> cost, int32_t k);

// LPT under a capacity: each item (cost, size), by cost descending, goes to
// the least loaded bin whose size stays within `cap`; when no bin has room,
// to the bin of least size (counted in `*overflow`). O(n log n + n k).
Partition LptWithCap(std::span<const double> cost, std::span<const double> size,
                     int32_t k, double cap, int64_t* overflow);

// The better (smaller makespan) of LPT and KK, as the balancing policy uses.
// KK holds k subsets per item: past kMaxKkCells items x bins it is left out
// (LPT alone; with that many items per bin LPT is within a hair of the
// bound).
inline constexpr double kMaxKkCells = 4e6;
Partition BestPartition(std::span<const double> cost, int32_t k);

// Min-max contiguous partition of a chain of items into exactly `parts`
// non-empty parts (chains-on-chains; needs items.size() >= parts). Returns
// the number of items of each part. Among the optimal partitions, the later
// parts are filled first (less activation memory on the first stages).
// Exact: the bottleneck is found by bisection to a relative 1e-13 and is a
// sum of contiguous items. O(n log(1/eps)).
std::vector<int32_t> MinMaxContiguous(std::span<const double> items,
                                      int32_t parts);

// Greedy min-max allocation of `units` identical units over workers whose
// time for n units is (n + offset) * unit_time[i] (1F1B: offset = p - 1):
// every worker gets at least one, then each unit goes to the worker whose
// time after taking it is least. Optimal for min-max. O(units log n).
std::vector<int32_t> GreedyUnits(std::span<const double> unit_time,
                                 int64_t units, double offset);

// Repacks one training step's sequences. `lengths[r * microbatches + mb]`
// are the tokens of each sequence of microbatch mb of DP replica r; each
// sequence costs a * s + b * s^2. Across replicas: the step's sequences are
// split over the replicas (the better of Karmarkar-Karp and LPT), then each
// replica's are packed into its microbatches by LPT under `cap` tokens per
// microbatch; otherwise only the packing within each replica. Returns the
// new lengths in the same layout. `*gap` (when set) gets the replica split's
// achieved / lower bound - 1, `*overflow` counts sequences placed past the
// cap. Deterministic.
std::vector<std::vector<int32_t>> RepackSequences(
    const std::vector<std::vector<int32_t>>& lengths, int32_t replicas,
    int32_t microbatches, double a, double b, double cap, bool across_replicas,
    double* gap, int64_t* overflow);

}  // namespace strag

#endif  // STRAG_SRC_BASE_PARTITION_H_
