// SPDX-License-Identifier: Apache-2.0
// HeldWindows: a job's windows of steps, prepared and held in memory (16
// bytes per op: start, launch delay, cost), for whatif::AnalyzeWindows and
// report::BuildWindowedReport. What a process of a distributed analysis
// holds of its steps (distributed_ops_csv.h), and what `strag analyze`
// holds of a large ops CSV whose rows come step by step
// (streamed_ops_csv.h, StreamOptions::hold).

#ifndef STRAG_SRC_LOAD_HELD_WINDOWS_H_
#define STRAG_SRC_LOAD_HELD_WINDOWS_H_

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "base/status.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::load {

class HeldWindows : public whatif::WindowSource {
 public:
  explicit HeldWindows(std::vector<whatif::PreparedTrace> windows)
      : windows_(std::move(windows)) {}
  Status ForEachWindow(
      const std::function<Status(const whatif::PreparedTrace&)>& fn) override {
    for (const whatif::PreparedTrace& w : windows_) RETURN_IF_ERROR(fn(w));
    return Status::Ok();
  }
  size_t size() const { return windows_.size(); }

 private:
  std::vector<whatif::PreparedTrace> windows_;
};

}  // namespace strag::load

#endif  // STRAG_SRC_LOAD_HELD_WINDOWS_H_
