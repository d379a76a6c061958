// SPDX-License-Identifier: Apache-2.0
// truth.json of `strag simulate` (schema "strag.truth/1"): every injected
// straggler with its coordinates, the steps it acted on, and the slowdown it
// caused (the job re-simulated without it). Documented in
// docs/formats/sim-spec.md.

#ifndef STRAG_SRC_REPORT_RENDER_TRUTH_JSON_H_
#define STRAG_SRC_REPORT_RENDER_TRUTH_JSON_H_

#include <string>

#include "sim/simulator.h"

namespace strag::report {

std::string RenderTruthJson(const sim::SimulatedJob& job);

// meta.yaml text for the simulated trace (flat `key: value` lines).
std::string RenderMetaYaml(const trace::JobMeta& meta);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_TRUTH_JSON_H_
