// SPDX-License-Identifier: Apache-2.0
// JobMeta: the parallel layout of a training job (DESIGN.md §5).

#ifndef STRAG_SRC_TRACE_JOB_META_H_
#define STRAG_SRC_TRACE_JOB_META_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strag::trace {

struct JobMeta {
  int32_t dp = 0;  // data-parallel degree (0 = derive from the trace)
  int32_t pp = 0;  // pipeline-parallel degree (0 = derive from the trace)
  int32_t tp = 1;  // tensor-parallel degree
  int32_t cp = 1;  // context-parallel degree (`dsp_size` in the published meta)
  int32_t vpp = 1;         // virtual pipeline chunks per stage
  int64_t world_size = 0;  // 0 = dp * pp * tp * cp
  std::string trial_name;
  // Every key of the metadata file, verbatim, in file order.
  std::vector<std::pair<std::string, std::string>> raw;

  int64_t WorldSize() const {
    return world_size > 0 ? world_size : int64_t{dp} * pp * tp * cp;
  }
};

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_JOB_META_H_
