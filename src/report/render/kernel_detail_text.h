// SPDX-License-Identifier: Apache-2.0
// The kernel detail (report/kernel_detail.h) as text lines for the terminal
// summary: per explained rank, what it is compared with, then its top ops
// by excess ("rank 2, compute #3: aten::mm +12.4 ms (1.40x, 96 calls)"); in
// a GPU trace that names the launching CPU ops, its top CPU ops with their
// kernels ("rank 2, compute #0: aten::mm +60.0 ms (1.50x; 6 kernels:
// ampere_bf16_s16816gemm_...)").

#ifndef STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_TEXT_H_
#define STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_TEXT_H_

#include <string>
#include <vector>

#include "report/kernel_detail.h"

namespace strag::report {

// Per rank: its top name (launching CPU op where known) over all its
// compute segments, then up to `top` (segment, name) pairs with a positive
// excess; "" when there is no detail.
// Each line starts with `indent`.
std::string KernelDetailText(const std::vector<KernelDetail>& detail,
                             const std::string& indent, size_t top = 3);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_RENDER_KERNEL_DETAIL_TEXT_H_
