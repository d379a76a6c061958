// SPDX-License-Identifier: Apache-2.0
// The detectors of Diagnose(), one per cause. Each reads the what-if result
// (and, where it needs per-op evidence, the trace's evidence, kept per step:
// trace_evidence.h) and returns a finding whose confidence is 0 when the
// cause does not apply.

#ifndef STRAG_SRC_DIAGNOSE_DETECTORS_H_
#define STRAG_SRC_DIAGNOSE_DETECTORS_H_

#include "diagnose/diagnosis.h"
#include "diagnose/trace_evidence.h"

namespace strag::diagnose {

// The share of the steps in which `w` is the worker waited for most (its
// un-fix-only slowdown of the step is the largest: per DP rank for the
// published layout, per rank for profiler traces).
double WorstWorkerShare(const whatif::WhatIfResult& r,
                        const whatif::WorkerScore& w);

// How clearly `w` stands out of the job's own step-to-step noise: per step,
// its un-fix-only slowdown minus the median of the other workers'; the mean
// of that margin over its standard deviation (floored at kNoiseFloor).
// Several for a worker slow in every step, under 1 for a worker that is
// ahead in some steps and behind in others. +inf with fewer than 5 steps
// (too few to judge the noise by).
double MarginOverNoise(const whatif::WhatIfResult& r,
                       const whatif::WorkerScore& w);

// A few workers explain most of the slowdown: M_W > 0.5, the worst an
// outlier against the others (its excess >= 3x the median worker's) that is
// the slowest in most steps.
Finding DetectFaultyWorker(const whatif::WhatIfResult& r);
// A stage whose every DP replica is heavier (M_S, median worker per stage).
Finding DetectStageImbalance(const TraceEvidence& t,
                             const whatif::WhatIfResult& r);
// Forward and backward times of a microbatch correlate (r >= 0.9 within a
// worker's step) and the slowest DP replica changes from step to step.
Finding DetectSequenceLengthImbalance(const TraceEvidence& t,
                                      const whatif::WhatIfResult& r);
// Launch delays (untraced host time: GC, Python) spike on a few workers.
Finding DetectHostPause(const TraceEvidence& t, const whatif::WhatIfResult& r);
// One or a few ranks start most steps late on the host (a gap before the
// step's first op: data loading, an input pipeline, a sleep), persistently.
Finding DetectDataLoading(const TraceEvidence& t,
                          const whatif::WhatIfResult& r);
// Communication op types dominate the slowdown while compute is balanced.
Finding DetectCommunication(const whatif::WhatIfResult& r);
// S < 1.05 and launch slowdown < 1.05: a healthy job.
Finding DetectHealthy(const whatif::WhatIfResult& r);

}  // namespace strag::diagnose

#endif  // STRAG_SRC_DIAGNOSE_DETECTORS_H_
