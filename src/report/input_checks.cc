// SPDX-License-Identifier: Apache-2.0
#include "report/input_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/median.h"

namespace strag::report {
namespace {

// Median step span of one rank (ns), 0 without steps.
double RankStepNs(const trace::RankTrace& r) {
  std::vector<double> spans;
  spans.reserve(r.steps.size());
  for (const trace::StepSpan& s : r.steps) {
    if (s.end_ns > s.start_ns) {
      spans.push_back(static_cast<double>(s.end_ns - s.start_ns));
    }
  }
  return Median(&spans);
}

std::string Duration(double ns) {
  char buf[32];
  if (ns >= 1e9) {
    std::snprintf(buf, sizeof(buf), "%.3g s", ns * 1e-9);
  } else if (ns >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.3g ms", ns * 1e-6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3g us", ns * 1e-3);
  }
  return buf;
}

}  // namespace

int64_t MedianStepSpanNs(const std::vector<trace::RankTrace>& ranks) {
  std::vector<double> medians;
  for (const trace::RankTrace& r : ranks) {
    if (const double m = RankStepNs(r); m > 0) medians.push_back(m);
  }
  return static_cast<int64_t>(LowerMedian(&medians));
}

std::string UnitMismatch(const std::vector<trace::RankTrace>& ranks) {
  std::vector<double> own(ranks.size());
  std::vector<double> medians;
  for (size_t i = 0; i < ranks.size(); ++i) {
    own[i] = RankStepNs(ranks[i]);
    if (own[i] > 0) medians.push_back(own[i]);
  }
  if (medians.size() < 2) return "";
  // The lower median: with two ranks, the shorter one is the reference.
  const double typical = LowerMedian(&medians);
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (own[i] <= 0) continue;
    const double ratio = own[i] / typical;
    if (ratio < kStepSpanRatioLimit && ratio > 1 / kStepSpanRatioLimit) {
      continue;
    }
    std::string out = "rank " + std::to_string(ranks[i].rank) + " (" +
                      ranks[i].source + "): its steps last ";
    char factor[32];
    std::snprintf(factor, sizeof(factor), "%.0fx",
                  ratio >= 1 ? ratio : 1 / ratio);
    out += std::string(factor) + (ratio >= 1 ? " as long as" : " shorter than");
    out += " the other ranks' (" + Duration(own[i]) + " vs " +
           Duration(typical) + ")";
    // 1000x either way is a unit: Kineto writes microseconds.
    if (std::fabs(std::log10(ratio) - (ratio >= 1 ? 3 : -3)) < 0.5) {
      out += ratio >= 1 ? ": its ts and dur look like nanoseconds where "
                          "theirs are microseconds"
                        : ": the others' ts and dur look like nanoseconds "
                          "where its are microseconds";
    } else {
      out += ": its times are not on the others' scale";
    }
    return out;
  }
  return "";
}

std::string ImplausibleClockFit(const ClockNotes& clock,
                                int64_t median_step_ns) {
  if (median_step_ns <= 0 || clock.collectives == 0) return "";
  const double step_us = static_cast<double>(median_step_ns) * 1e-3;
  if (clock.residual_p99_us <= kResidualP99StepShare * step_us &&
      clock.residual_max_us <= step_us) {
    return "";
  }
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "the clock fit leaves matched collectives ending up to %s "
                "apart (p99 %s) against a median step of %s: the ranks' "
                "times are not comparable",
                Duration(clock.residual_max_us * 1e3).c_str(),
                Duration(clock.residual_p99_us * 1e3).c_str(),
                Duration(static_cast<double>(median_step_ns)).c_str());
  return buf;
}

Result<std::vector<std::string>> CheckMeta(const trace::JobMeta& meta,
                                           const whatif::PreparedTrace& trace,
                                           const InputNotes* notes) {
  std::vector<std::string> warnings;
  const auto n = [](int64_t v) { return std::to_string(v); };
  if (notes == nullptr) {  // an ops CSV: its dp and pp are the trace's
    if (meta.dp > 0 && meta.dp != trace.dp) {
      warnings.push_back("metadata says dp " + n(meta.dp) +
                         " but the trace has " + n(trace.dp) +
                         " DP ranks; using the trace");
    }
    if (meta.pp > 0 && meta.pp != trace.pp) {
      warnings.push_back("metadata says pp " + n(meta.pp) +
                         " but the trace has " + n(trace.pp) +
                         " pipeline stages; using the trace");
    }
  }
  // The world as analysed: the trace's dp and pp (an ops CSV) or the ranks
  // present and claimed (profiler traces), with tp and cp from the metadata.
  const int64_t tp = std::max(1, meta.tp), cp = std::max(1, meta.cp);
  const int64_t layout =
      notes ? notes->world_size : int64_t{trace.dp} * trace.pp * tp * cp;
  const std::string how = notes ? "the traces' world"
                                : "dp " + n(trace.dp) + " x pp " + n(trace.pp) +
                                      " (from the trace) x tp " + n(tp) +
                                      " x cp " + n(cp);
  if (layout > kMaxWorldSize) {
    return InvalidInput("metadata: " + how + " = " + n(layout) +
                        " GPUs, more than the largest world (" +
                        n(kMaxWorldSize) + ")");
  }
  if (meta.world_size > 0 && meta.world_size != layout) {
    return InvalidInput(
        "metadata: world_size " + n(meta.world_size) + " contradicts " + how +
        " = " + n(layout) +
        ": the GPU-hours would be priced on the wrong number of GPUs (fix "
        "the metadata, or give --gpus)");
  }
  const int64_t world = meta.world_size > 0 ? meta.world_size : layout;
  for (const whatif::Worker& w : trace.workers) {
    if (w.rank >= world) {
      return InvalidInput("rank " + n(w.rank) +
                          " of the trace is not below "
                          "the world size " +
                          n(world) + " (" + how + ")");
    }
  }
  return warnings;
}

}  // namespace strag::report
