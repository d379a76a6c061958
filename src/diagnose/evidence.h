// SPDX-License-Identifier: Apache-2.0
// The evidence view the detectors read: per-worker and per-step numbers
// derived from the prepared trace and the what-if result (compute per step,
// host gaps and named host time, per-step worst workers), and the small
// helpers the detectors share. Pure; the live detector can fill the same
// numbers later.

#ifndef STRAG_SRC_DIAGNOSE_EVIDENCE_H_
#define STRAG_SRC_DIAGNOSE_EVIDENCE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
// An attribution group of communication (not compute, optimizer or gc).
bool IsCommGroup(const std::string& group);

// Compute time of every worker (t.workers order) in every step, s.
std::vector<std::vector<double>> WorkerComputePerStep(
    const whatif::PreparedTrace& t);
// The topology's PP stage of every worker (t.workers order).
std::vector<int32_t> StageOfWorkers(const whatif::PreparedTrace& t);
// The DP rank with the highest un-fix slowdown in each step.
std::vector<size_t> WorstDpPerStep(const whatif::WhatIfResult& r);

// The host gap at the start of each worker's step, s, [rank] -> per step.
std::map<int32_t, std::vector<double>> StepStartGaps(
    const whatif::PreparedTrace& t);
// The launch delays of at least 5 ms, summed over the trace, s.
double HostDelay(const whatif::PreparedTrace& t);
// Host time the trace names ([worker * steps + step], s) as [rank] -> per
// step.
std::map<int32_t, std::vector<double>> NamedHostTime(
    const whatif::PreparedTrace& t, const std::vector<float>& per_slot);

}  // namespace strag::diagnose

#endif  // STRAG_SRC_DIAGNOSE_EVIDENCE_H_
