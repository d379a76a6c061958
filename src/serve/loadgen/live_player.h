// SPDX-License-Identifier: Apache-2.0
// `strag simulate SPEC --live URL`: plays a simulated job to a collector as
// the agents of every rank would (docs/formats/agent-protocol.md), so that
// the injected stragglers are the ground truth of the live detection.
//
// The job is simulated in chunks of steps (bounded memory at any length;
// chunk c draws with seed + c, and injections keep their absolute step
// ranges). Every global rank sends one step record per step: phases and
// collective time of its traced worker (TP and CP members repeat it), the
// GC pauses and data stalls drawn for it, and the step's span; t_end_ns is
// simulated time from the start of the play.

#ifndef STRAG_SRC_SERVE_LOADGEN_LIVE_PLAYER_H_
#define STRAG_SRC_SERVE_LOADGEN_LIVE_PLAYER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "sim/job_spec.h"

namespace strag::serve {

struct LivePlayOptions {
  std::string url;          // http://HOST:PORT
  std::string job = "sim";  // job name sent
  std::string token;
  double rate = 1;          // steps per second; 0: as fast as accepted
  int64_t records_per_request = 1000;
  int64_t chunk_steps = 100;
};

struct LivePlayStats {
  int64_t steps = 0, records = 0, requests = 0, retries = 0;
  double seconds = 0;
};

// `progress` gets a line now and then (may be empty).
Result<LivePlayStats> PlayLive(const sim::JobSpec& spec,
                               const LivePlayOptions& options,
                               const std::function<void(const std::string&)>& progress);

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_LOADGEN_LIVE_PLAYER_H_
