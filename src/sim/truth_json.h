// SPDX-License-Identifier: Apache-2.0
// truth.json of `strag simulate` (schema "strag.truth/1"): every injected
// straggler with its coordinates, the steps it acted on, and the slowdown it
// caused (the job re-simulated without it). Documented in
// docs/formats/sim-spec.md.

#ifndef STRAG_SRC_SIM_TRUTH_JSON_H_
#define STRAG_SRC_SIM_TRUTH_JSON_H_

#include <string>

#include "sim/simulator.h"

namespace strag::sim {

std::string RenderTruthJson(const SimulatedJob& job);

}  // namespace strag::sim

#endif  // STRAG_SRC_SIM_TRUTH_JSON_H_
