// SPDX-License-Identifier: Apache-2.0
#include "report/render/kernel_detail_text.h"

#include <algorithm>

#include "base/str_format.h"
#include "report/render/text_units.h"

namespace strag::report {
namespace {

// Kernel names can be C++ signatures hundreds of characters long.
constexpr size_t kMaxNameChars = 64;

std::string ShortName(const std::string& name) {
  std::string out = Printable(name);
  if (out.size() > kMaxNameChars) {
    // Cut at a character boundary, not inside a UTF-8 sequence.
    size_t cut = kMaxNameChars - 3;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) {
      --cut;
    }
    out = out.substr(0, cut) + "...";
  }
  return out;
}

std::string StepList(const std::vector<int64_t>& steps) {
  std::string out;
  for (int64_t s : steps) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

struct Line {
  const SegmentExcess* segment;
  const OpExcess* op;
};

// What the lines list: CPU ops with their kernels where the trace names
// them, else the names.
const std::vector<OpExcess>& Listed(const KernelDetail& d) {
  return d.launch_ops.empty() ? d.ops : d.launch_ops;
}
const std::vector<OpExcess>& Listed(const KernelDetail& d,
                                    const SegmentExcess& s) {
  return d.launch_ops.empty() ? s.ops : s.launch_ops;
}

// The rank's ops with a positive excess, largest first (stable: segment
// order, then the segment's own order).
std::vector<Line> TopOps(const KernelDetail& d, size_t top) {
  std::vector<Line> lines;
  for (const SegmentExcess& s : d.segments) {
    for (const OpExcess& op : Listed(d, s)) {
      if (op.excess_s > 0) lines.push_back({&s, &op});
    }
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) {
                     return a.op->excess_s > b.op->excess_s;
                   });
  if (lines.size() > top) lines.resize(top);
  return lines;
}

// Kernel names listed after a CPU op's count.
constexpr size_t kKernelsListed = 2;

// "NAME +12.4 ms (1.40x, 96 kernels)"; for a CPU op with its kernels,
// "aten::mm +12.4 ms (1.40x; 96 kernels: K1, K2, 1 more)".
std::string OpText(const OpExcess& op, const KernelDetail& d) {
  const std::string ratio =
      op.ratio > 0            ? StrFormat("%.2fx", op.ratio)
      : op.median_count == 0  ? StrFormat("not on rank %d", d.median_rank)
      : op.count == 0         ? std::string("none here")
                              : std::string("no time");
  if (!op.kernels.empty()) {
    // The rank's own kernels (the median's other ones are in the JSON).
    std::string kernels;
    size_t listed = 0, own = 0;
    for (const OpExcess& k : op.kernels) {
      if (k.count == 0) continue;
      if (listed < kKernelsListed) {
        kernels += (listed++ == 0 ? "" : ", ") + ShortName(k.name);
      }
      ++own;
    }
    if (own > listed) kernels += StrFormat(", %zu more", own - listed);
    return ShortName(op.name) +
           StrFormat(" +%s (%s; %lld kernels: %s)",
                     Duration(op.excess_s).c_str(), ratio.c_str(),
                     static_cast<long long>(op.count), kernels.c_str());
  }
  return ShortName(op.name) +
         StrFormat(" +%s (%s, %lld %s)", Duration(op.excess_s).c_str(),
                   ratio.c_str(), static_cast<long long>(op.count),
                   d.cpu_ops ? "calls" : "kernels");
}

}  // namespace

std::string KernelDetailText(const std::vector<KernelDetail>& detail,
                             const std::string& indent, size_t top) {
  std::string out;
  for (const KernelDetail& d : detail) {
    const char* what = d.cpu_ops              ? "CPU ops"
                       : d.launch_ops.empty() ? "GPU kernels"
                                              : "GPU kernels by CPU op";
    out += indent + StrFormat(
                        "why rank %d is slow (%s, steps %s, vs rank %d: "
                        "median of its %d stage peer(s)): compute %s%s\n",
                        d.rank, what, StepList(d.steps).c_str(), d.median_rank,
                        d.peers, d.excess_s >= 0 ? "+" : "",
                        Duration(d.excess_s).c_str());
    const std::vector<OpExcess>& all = Listed(d);
    if (!all.empty() && all.front().excess_s > 0) {
      out += indent + StrFormat("  rank %d, all compute: ", d.rank) +
             OpText(all.front(), d) + "\n";
    }
    for (const Line& l : TopOps(d, top)) {
      out += indent +
             StrFormat("  rank %d, compute #%d: ", d.rank, l.segment->segment) +
             OpText(*l.op, d) + "\n";
    }
  }
  return out;
}

}  // namespace strag::report
