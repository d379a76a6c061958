// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the job spec: any text must parse or fail cleanly,
// and a spec that parses must simulate or fail cleanly (no overflow, no
// unbounded allocation). Specs whose estimated footprint is large are only
// estimated, as `strag simulate` refuses them. Build with clang
// (STRAG_BUILD_FUZZERS=ON; scripts/fuzz.sh runs it).

#include <cstdint>
#include <string_view>

#include "sim/footprint.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "trace/ops_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto spec = strag::sim::ParseJobSpec(text, "fuzz.yaml");
  if (!spec.ok()) return 0;
  const strag::sim::Footprint footprint =
      strag::sim::EstimateFootprint(*spec, {.write = true});
  // A few thousand ops keep each input fast; the estimate is what guards
  // the command line against the rest.
  if (footprint.ops > 20000 || footprint.bytes > (int64_t{64} << 20)) {
    return 0;
  }
  const auto job = strag::sim::Simulate(*spec);
  if (!job.ok()) return 0;
  const strag::trace::OpsTable table =
      strag::sim::ToOpsTable(*job, 0, spec->job.steps);
  (void)table;
  return 0;
}
