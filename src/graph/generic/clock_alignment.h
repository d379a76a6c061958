// SPDX-License-Identifier: Apache-2.0
// Clock alignment: one offset per rank from the end times of matched
// collectives.
//
// Every rank's profiler clock differs from the others' by an unknown offset
// (CPU traces even start at zero per process), but the members of one
// collective end within microseconds of each other. Given, per collective,
// each member's end on its own clock, AlignClocks finds offsets such that
// `end + offset` agrees across the members of every collective.
//
// Method (robust to a few late members): start from offsets propagated
// outwards from an anchor rank through shared collectives, then alternate
//   consensus(c) = median over the members m of c of (end_m + offset_m)
//   offset(r)    = median over the collectives c of r of (consensus(c) - end_r)
// re-anchoring after every round, until no offset moves by more than the
// tolerance. Ranks connected only through subgroups (a chain of pairs, DP
// groups joined by pipeline sends) are handled: offsets propagate along any
// path. Each connected set of ranks is anchored at its lowest rank index
// (offset 0); ranks that share no collective keep offset 0 (anchor -1).
//
// Precision: absolute profiler times (~1.7e18 ns since the epoch) do not fit
// a double exactly, so every end is taken relative to its collective's first
// member; only differences (offsets, spreads) are held in doubles.
// Cost: O(entries log entries) per round, entries = sum of members.

#ifndef STRAG_SRC_GRAPH_GENERIC_CLOCK_ALIGNMENT_H_
#define STRAG_SRC_GRAPH_GENERIC_CLOCK_ALIGNMENT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strag::graph {

// Members' end times of many collectives, flattened: collective c owns the
// entries [begin[c], begin[c + 1]).
struct CollectiveEnds {
  std::vector<uint32_t> begin = {0};
  std::vector<int32_t> rank;    // rank index of the member
  std::vector<int64_t> end_ns;  // its end, on its own clock

  void Add(int32_t rank_index, int64_t end) {
    rank.push_back(rank_index);
    end_ns.push_back(end);
  }
  // Closes the collective made of the entries added since the last Close.
  void Close() { begin.push_back(static_cast<uint32_t>(rank.size())); }
  size_t size() const { return begin.size() - 1; }
};

struct ClockAlignOptions {
  int32_t max_iterations = 100;  // refinement rounds
  double tolerance_ns = 1.0;     // stop when no offset moves more than this
};

struct ClockAlignment {
  // Per rank index: aligned time = own time + offset_ns.
  std::vector<int64_t> offset_ns;
  // Per rank index: the rank index whose offset is fixed at 0 in its
  // connected set (itself for an anchor), or -1 when the rank shares no
  // collective with any other rank (its offset stays 0).
  std::vector<int32_t> anchor;
  // Per rank index: the collectives that constrain its offset.
  std::vector<int64_t> collectives_of_rank;
  int64_t collectives = 0;  // with at least two members
  // |end + offset - consensus| over every member of every used collective.
  int64_t residual_max_ns = 0;
  int64_t residual_p99_ns = 0;
  int32_t iterations = 0;
  bool converged = true;
  // Offsets left at 0: every trace has an absolute clock and every matched
  // collective is causal as written (its earliest end after its latest
  // start); the residuals are then the collectives' end-time spread.
  bool kept_raw = false;
  double last_change_ns = 0;  // largest offset move in the last round
};

// Aligns `num_ranks` clocks from `ends` (rank indices < num_ranks; a rank
// listed twice in one collective counts once; collectives with fewer than two
// ranks are ignored). Pure and deterministic.
ClockAlignment AlignClocks(size_t num_ranks, const CollectiveEnds& ends,
                           const ClockAlignOptions& options = {});

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_CLOCK_ALIGNMENT_H_
