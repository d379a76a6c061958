// SPDX-License-Identifier: Apache-2.0
// The kernel detail section of the HTML report: one small table per
// explained rank, its ops by excess over its stage's median rank
// (report/kernel_detail.h); every op is in the JSON.

#ifndef STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_HTML_H_
#define STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_HTML_H_

#include <string>
#include <vector>

#include "report/kernel_detail.h"

namespace strag::report {

// "" when there is no detail.
std::string KernelDetailHtmlSection(const std::vector<KernelDetail>& detail);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_HTML_H_
