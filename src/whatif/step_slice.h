// SPDX-License-Identifier: Apache-2.0
// SliceSteps: the steps [first_step, first_step + count) of a prepared
// job, as the window PrepareWindow would build from their rows (what one
// process of a distributed analysis replays: whatif::WhatIfOptions's
// collective).

#ifndef STRAG_SRC_WHATIF_STEP_SLICE_H_
#define STRAG_SRC_WHATIF_STEP_SLICE_H_

#include <cstddef>

#include "whatif/prepared_trace.h"

namespace strag::whatif {

// Copies the model, layout, workers and topology, and of the given steps
// the per-slot arrays and step times. What only the diagnosis and the
// planner read (host-time series, input sizes, sequence lengths) is left
// out: the analysis does not use it.
PreparedTrace SliceSteps(const PreparedTrace& t, size_t first_step,
                         size_t count);

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_STEP_SLICE_H_
