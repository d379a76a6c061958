// SPDX-License-Identifier: Apache-2.0
// The evidence view the detectors read: per-worker and per-step numbers
// from the trace's evidence (trace_evidence.h: compute per step, host gaps
// and named host time) and the what-if result (per-step worst workers),
// and the small helpers the detectors share. Pure.

#ifndef STRAG_SRC_DIAGNOSE_EVIDENCE_H_
#define STRAG_SRC_DIAGNOSE_EVIDENCE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "diagnose/trace_evidence.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag::diagnose {

// Below this excess slowdown (1%), a worker's excess is noise: the median
// worker's is floored at it when judging an outlier.
inline constexpr double kNoiseFloor = 0.01;

double Clamp01(double x);  // 0 for a non-finite x
// snprintf into a string (evidence sentences).
std::string Format(const char* fmt, double a, double b = 0, double c = 0,
                   double d = 0);
double MeanOf(const std::vector<double>& v);
double Pearson(const std::vector<double>& x, const std::vector<double>& y);
// The Pearson correlation of pooled sums (0 below 3 pairs or without
// spread): cov = xy - x y / n over the root of the same for xx and yy.
double PearsonOfSums(const PairSums& s);
// An attribution group of communication (not compute, optimizer or gc).
bool IsCommGroup(const std::string& group);

// Compute time of every worker (t.workers order) in every step, s:
// [worker][step].
std::vector<std::vector<double>> WorkerComputePerStep(
    const whatif::PreparedTrace& t);
std::vector<std::vector<double>> WorkerComputePerStep(const TraceEvidence& e);
// The topology's PP stage of every worker (e.workers order).
std::vector<int32_t> StageOfWorkers(const TraceEvidence& e);
// The DP rank with the highest un-fix slowdown in each step.
std::vector<size_t> WorstDpPerStep(const whatif::WhatIfResult& r);

// The host gap at the start of each worker's step, s, [rank] -> per step.
std::map<int32_t, std::vector<double>> StepStartGaps(const TraceEvidence& e);
// The launch delays of at least 5 ms, summed over the trace, s.
double HostDelay(const TraceEvidence& e);
// Host time the trace names ([worker * steps + step], s) as [rank] -> per
// step.
std::map<int32_t, std::vector<double>> NamedHostTime(
    const TraceEvidence& e, const std::vector<float>& per_slot);

}  // namespace strag::diagnose

#endif  // STRAG_SRC_DIAGNOSE_EVIDENCE_H_
