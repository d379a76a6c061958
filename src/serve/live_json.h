// SPDX-License-Identifier: Apache-2.0
// The dashboard's JSON (GET /api/v1/jobs/{job}/live?since_step=N) and the
// job list (GET /api/v1/jobs): docs/formats/agent-protocol.md names them,
// docs/live.md describes the fields.

#ifndef STRAG_SRC_SERVE_LIVE_JSON_H_
#define STRAG_SRC_SERVE_LIVE_JSON_H_

#include <string>
#include <vector>

#include "serve/live/job_monitor.h"

namespace strag::serve {

// The on-call block of a live job, in the words of `strag analyze`'s.
std::string OnCallText(const JobMonitor::Snapshot& s);

// "healthy", "degraded" (S >= 1.05), "alert" (an alert firing) or
// "silent ranks".
const char* JobState(const JobMonitor::Snapshot& s);

std::string LiveJson(const JobMonitor::Snapshot& s, int64_t since_step);
std::string JobsJson(const std::vector<JobMonitor::Snapshot>& jobs);

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_LIVE_JSON_H_
