// SPDX-License-Identifier: Apache-2.0
// CaptureRunner: where the targeted captures' traces go
// (DIR/JOB/CAPTURE/rank-R.json) and how they are explained: once every
// rank of a capture has uploaded, `strag analyze` runs on the folder in a
// child process (a damaged trace cannot take the collector down) and
// writes report.html, report.json and summary.txt beside the traces.

#ifndef STRAG_SRC_SERVE_CAPTURE_RUNNER_H_
#define STRAG_SRC_SERVE_CAPTURE_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace strag::serve {

class CaptureRunner {
 public:
  CaptureRunner() = default;
  CaptureRunner(std::string dir, std::string strag_exe);
  CaptureRunner(CaptureRunner&& other) noexcept;
  CaptureRunner& operator=(CaptureRunner&& other) noexcept;
  ~CaptureRunner();

  // Writes one rank's trace; returns the capture's folder.
  Result<std::string> SaveTrace(const std::string& job, const std::string& id,
                                int32_t rank, const std::string& trace);

  // Analyses `folder` on a thread of its own; `done(state, summary)` with
  // state "analysed" (summary: the report's on-call block) or "failed"
  // (summary: why).
  using Done = std::function<void(const std::string& state,
                                  const std::string& summary)>;
  void Analyse(const std::string& folder, Done done);

  void Join();  // waits for the analyses under way

 private:
  std::string dir_, exe_;
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
  std::vector<std::thread> running_;
};

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_CAPTURE_RUNNER_H_
