// SPDX-License-Identifier: Apache-2.0
// Diagnosis: from the what-if metrics to probable causes with evidence.
//
// One detector per cause (detectors.cc), each returning a finding with a
// confidence in [0, 1] and the numbers behind it; the probable cause is the
// most confident finding. The thresholds are those of the OSDI'25 study
// (whatif-method.md §1.5): M_W > 0.5 for a few faulty workers, M_S >= 0.5 for
// stage imbalance, forward/backward Pearson r >= 0.9 for sequence-length
// imbalance, P90 of the per-step slowdown over S <= 1.06 for persistence.

#ifndef STRAG_SRC_DIAGNOSE_DIAGNOSIS_H_
#define STRAG_SRC_DIAGNOSE_DIAGNOSIS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/trace_evidence.h"
#include "trace/job_meta.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"
#include "whatif/timeline.h"

namespace strag::diagnose {

enum class Cause {
  kNone,
  kFaultyWorker,
  kStageImbalance,
  kSequenceLengthImbalance,
  kHostPause,
  kCommunication,
  kDataLoading,  // a rank's host starts its steps late (input pipeline)
};
std::string_view CauseName(Cause cause);  // "faulty_worker", ...

struct Finding {
  Cause cause = Cause::kNone;
  double confidence = 0;       // in [0, 1]
  std::vector<int32_t> ranks;  // the workers it names, if any
  std::string evidence;        // one or two sentences with the numbers
  // The share of the steps in which ranks.front() shows the cause (is the
  // worker waited for, starts late, pauses); -1 when the detector does not
  // measure it per step.
  double step_share = -1;
};

struct Straggler {
  int32_t rank = -1, dp = -1, pp = -1, tp = 0, node = -1;
  // Its host, when the input names hosts (Topology::hosts); else "" and
  // `node` is rank / gpus_per_node.
  std::string host;
};

struct Diagnosis {
  std::vector<Finding> findings;  // most confident first
  Cause probable_cause = Cause::kNone;
  // "blocking" when S explains most of the lost time, else "launch delay".
  std::string dominant_cause;
  Straggler largest_straggler;
  std::string
      scope;  // "TP group 1840-1847, PP stage 3, DP replica 38, node 230"
  double excess_step_time_ms = 0;  // mean observed - mean ideal step
  double blocking_share = 0;   // of the excess: blocking (S) vs launch delay
  double persistence_p90 = 0;  // P90 of per-step S / S
  // With a straggler named: it shows in at least half the steps (its
  // finding's step share, else worst_worker_share); else P90 <= 1.06.
  bool persistent = false;
  // False with a single step (a one-step capture): persistent means nothing.
  bool persistence_known = true;
  double worst_worker_share = 0;  // steps where its DP rank is the slowest
  double compute_share = 0;       // of the blocking loss, compute op types
  double communication_share = 0;
  int64_t worst_step = -1;
  // In the worst step (AddWorstStep): the compute op and the communication
  // op that exceed their ideal duration the most, as text.
  std::string worst_microbatch;
  std::string worst_collective;
};

struct DiagnoseOptions {
  int32_t gpus_per_node = 8;
  // Nobody said so (no metadata, no host names): the scope says that its
  // node is rank / gpus_per_node by assumption.
  bool gpus_per_node_assumed = false;
  int32_t tp = 1;  // traced worker = its TP group's first rank
  size_t threads = 1;  // detectors run at once (0: one per core)
};

// From the evidence of every step (trace_evidence.h: a whole trace, or a
// job built window by window), the same for both.
Diagnosis Diagnose(const TraceEvidence& evidence,
                   const whatif::WhatIfResult& result,
                   const DiagnoseOptions& options);
// The whole trace's: Diagnose(EvidenceOf(trace), ...).
Diagnosis Diagnose(const whatif::PreparedTrace& trace,
                   const whatif::WhatIfResult& result,
                   const DiagnoseOptions& options);

// The facts Diagnose measures from the what-if result alone (excess step
// time, blocking share, persistence, compute / communication split, worst
// step): what a job analysed in windows of steps, whose detectors cannot
// run, still reports.
void AddMeasuredFacts(const whatif::WhatIfResult& r, Diagnosis* diagnosis);

// When the input cannot support a diagnosis (`reason`, e.g. "only 2 of 128
// ranks are traced"): no finding, cause or straggler is named, and the
// dominant cause is "unknown: <reason>"; the measured facts stay.
void WithoutDiagnosis(const std::string& reason, Diagnosis* diagnosis);

// "persistent", "transient" or, from a single step, "unknown (one step)".
const char* PersistenceWord(const Diagnosis& diagnosis);

// Fills worst_microbatch / worst_collective from the worst step's timeline.
void AddWorstStep(const whatif::Timeline& worst_step, Diagnosis* diagnosis);

}  // namespace strag::diagnose

#endif  // STRAG_SRC_DIAGNOSE_DIAGNOSIS_H_
