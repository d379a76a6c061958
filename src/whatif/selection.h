// SPDX-License-Identifier: Apache-2.0
// Selection: a set X of traced ops (all their rows), as the counterfactuals
// "fix only X" / "un-fix only X" take it (whatif-spec.md §7.7).
//
// X is a union of terms; a term is (nodes) x (instances): the ops whose node
// is in `nodes` and whose instance (step, dp rank) is in `instances`.

#ifndef STRAG_SRC_WHATIF_SELECTION_H_
#define STRAG_SRC_WHATIF_SELECTION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "whatif/prepared_trace.h"

namespace strag::whatif {

struct SelectionTerm {
  std::vector<uint8_t> nodes;      // [node] -> selected
  std::vector<uint8_t> instances;  // [instance] -> selected
};

struct Selection {
  std::string label;  // e.g. "stage=3" or "ranks 0, 17"
  std::vector<SelectionTerm> terms;
};

// Builders for the common sets.
SelectionTerm AllOps(const PreparedTrace& trace);
Selection SelectWorkers(const PreparedTrace& trace,
                        const std::vector<Worker>& workers);
Selection SelectStage(const PreparedTrace& trace, int32_t stage);
// The workers whose topology place has PP stage `pp` and DP replica `dp`
// (-1: any), labelled "pp=S" / "dp=D".
Selection SelectPlaces(const PreparedTrace& trace, int32_t pp, int32_t dp);

// The part of `x` on the instances [first, first + count) (a window of
// whole steps), renumbered from 0.
Selection SliceInstances(const Selection& x, size_t first, size_t count);

// Parses "key=value[+value...][,key=value...]": keys rank, stage (or pp),
// dp, optype (an op type or a group such as forward-pp-comm), step. Values of
// one key are alternatives; different keys must all match. Fails with
// kInvalidInput naming the selector and the bad part; a value that selects
// nothing (an unknown rank or step) is an error too.
Result<Selection> ParseSelection(std::string_view text,
                                 const PreparedTrace& trace);

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_SELECTION_H_
