// SPDX-License-Identifier: Apache-2.0
// What `strag simulate` may hold, and the check of a job against it before
// anything is allocated (the estimate itself: sim/footprint.h).

#ifndef STRAG_SRC_CLI_SIMULATE_LIMITS_H_
#define STRAG_SRC_CLI_SIMULATE_LIMITS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "sim/footprint.h"
#include "sim/job_spec.h"

namespace strag::cli {

// The memory a run may hold: kMemoryFraction of the smaller of the physical
// memory and the address-space limit (`ulimit -v`).
inline constexpr double kMemoryFraction = 0.5;

struct MemoryBudget {
  int64_t bytes = 0;  // what a run may hold
  int64_t of = 0;     // the memory it is a fraction of
  std::string what;   // "physical memory", "address-space limit (ulimit -v)"
};

// This machine's budget: sysconf(_SC_PHYS_PAGES) and getrlimit(RLIMIT_AS).
MemoryBudget ThisMachinesBudget();

// "750 MB", "1.2 GB", "3.4 TB": a memory size for messages.
std::string MemoryText(int64_t bytes);

// Ok when the job fits: by default its estimated memory within `budget`;
// with `max_ops` (--max-ops) its simulated ops at most that many, whatever
// the memory. Otherwise kInvalidInput, one line with the estimate and how
// to shrink the job (steps that fit, --steps-window, microbatches),
// starting with `source` (the spec file, or "preset NAME").
Status CheckSimulationFits(const std::string& source, const sim::JobSpec& spec,
                           const sim::FootprintOptions& options,
                           std::optional<int64_t> max_ops,
                           const MemoryBudget& budget);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_SIMULATE_LIMITS_H_
