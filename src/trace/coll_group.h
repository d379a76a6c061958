// SPDX-License-Identifier: Apache-2.0
// The kinds of process group a collective runs in, as the live agents sum
// their collective time (docs/formats/agent-protocol.md) and the online
// detector compares it: data, pipeline, tensor, context and expert
// parallel, or another group.

#ifndef STRAG_SRC_TRACE_COLL_GROUP_H_
#define STRAG_SRC_TRACE_COLL_GROUP_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace strag::trace {

enum class CollGroup : uint8_t { kDp, kPp, kTp, kCp, kEp, kOther };
inline constexpr size_t kCollGroups = 6;
// Wire and metric names, indexed by CollGroup.
inline constexpr std::array<const char*, kCollGroups> kCollGroupNames = {
    "dp", "pp", "tp", "cp", "ep", "other"};

// Per-group sums (time in ns, or counts), indexed by CollGroup.
using CollNs = std::array<int64_t, kCollGroups>;
using CollCounts = std::array<int32_t, kCollGroups>;

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_COLL_GROUP_H_
