// SPDX-License-Identifier: Apache-2.0
// The kernel detail (report/kernel_detail.h) in the analysis JSON: the
// `kernel_detail` array of docs/formats/analysis-json.md, every op of every
// compared segment.

#ifndef STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_JSON_H_
#define STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_JSON_H_

#include <vector>

#include "base/json_writer.h"
#include "report/kernel_detail.h"

namespace strag::report {

// Writes `"kernel_detail": [...]` into the open object of `w`.
void WriteKernelDetail(JsonWriter* w, const std::vector<KernelDetail>& detail);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_JSON_H_
