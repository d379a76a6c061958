// SPDX-License-Identifier: Apache-2.0
// Group catalog: the process groups of a job, merged over its ranks' traces.
//
// Each trace names the groups its rank is in (`pg_config`, or a collective's
// `Process Group Name` / `Process Group Ranks`). Groups are the same across
// ranks when their name (and rank list, when traces disagree on it) is the
// same; a group known only by its rank list is keyed by that list. An op
// whose group is unknown belongs to the default group of all ranks.

#ifndef STRAG_SRC_GRAPH_GENERIC_GROUP_CATALOG_H_
#define STRAG_SRC_GRAPH_GENERIC_GROUP_CATALOG_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trace/rank_trace.h"

namespace strag::graph {

// Process groups of the job, merged over the ranks' traces. `traces` and
// `ranks` are indexed by rank index; `ranks` holds global ranks, sorted.
struct GroupCatalog {
  struct Group {
    std::string label;             // "group '1' (ranks 0-3)", for messages
    std::vector<int32_t> members;  // rank indices expected to join
    std::vector<int32_t> absent;   // listed global ranks without a trace
    bool use_seq = true;           // every collective of it carries a seq
  };
  std::vector<Group> groups;
  // Per rank index: trace group index + 1 -> catalog id (slot 0: unknown
  // group, i.e. the default group of all ranks).
  std::vector<std::vector<int32_t>> of_rank;

  int32_t Of(size_t rank_index, int32_t trace_group) const;
};

GroupCatalog BuildGroupCatalog(std::span<const trace::RankTrace* const> traces,
                               std::span<const int32_t> ranks);

// "0-3,8,10-11" for sorted, distinct ranks.
std::string FormatRanks(std::span<const int32_t> ranks);

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_GENERIC_GROUP_CATALOG_H_
