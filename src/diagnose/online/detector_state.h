// SPDX-License-Identifier: Apache-2.0
// The OnlineDetector's state, shared by its implementation files
// (online_detector.cc: steps; online_alerts.cc: the alert rules;
// online_view.cc: the view). Internal to diagnose/online.

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_DETECTOR_STATE_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_DETECTOR_STATE_H_

#include <cstdint>
#include <map>
#include <vector>

#include "diagnose/online/alert_book.h"
#include "diagnose/online/cusum.h"
#include "diagnose/online/online_causes.h"
#include "diagnose/online/online_detector.h"
#include "diagnose/online/presence.h"
#include "diagnose/online/rank_table.h"
#include "diagnose/online/step_judge.h"
#include "diagnose/online/window.h"

namespace strag::diagnose::online {

// A firing alert whose resolution the detector decides.
enum class HeldKind { kWorker, kStage, kSequence, kCommunication, kSilent };
struct HeldAlert {
  HeldKind kind = HeldKind::kWorker;
  // kWorker: cells; kStage: the stage index; kSilent: rank indexes still
  // silent.
  std::vector<int32_t> keys;
  Gate exit;
};

struct DetectorState {
  explicit DetectorState(const OnlineOptions& o);

  OnlineOptions options;
  RankTable table;
  Presence presence;
  Window window;
  StepJudge judge;
  RegimeCusum cusum;
  AlertBook book;

  uint64_t serial = 0;
  int64_t steps_closed = 0, last_step = -1, t_ns = 0;
  // Per step, reused.
  std::vector<int32_t> record_index;
  std::vector<uint8_t> record_judged;
  std::vector<int64_t> t_scratch;
  std::vector<int32_t> newly_silent, back;
  // The last step: robust z and busy / peers' median per cell (0: not
  // judged), median busy per stage index (-1: none).
  std::vector<float> last_z, last_ratio;
  std::vector<double> last_stage_med;
  // Since the start, s per GPU.
  double lost_sync_s = 0, lost_host_s = 0, lost_compute_s = 0, wasted_s = 0;
  // The window as last measured, and the alert gates.
  WindowFacts facts;
  std::map<int32_t, Gate> worker_gates;  // by cell
  std::map<int32_t, Gate> stage_gates;   // by stage index
  Gate seq_gate, comm_gate;
  std::map<int64_t, HeldAlert> held;  // by alert id
  std::vector<int64_t> silent_alert;  // by rank index, 0: none
};

struct OnlineDetector::State : DetectorState {
  using DetectorState::DetectorState;
};

// Cells by their summed lateness over the window, largest first (ties:
// lower cell index), at most `k`, only cells later than their reference on
// the whole. O(cells).
void TopCells(const DetectorState& s, size_t k, std::vector<int32_t>* out);
// The rank index a cell names: the member that was its max most often in
// the window's implicated steps (else judged steps). O(W).
int32_t NamedRank(const DetectorState& s, int32_t cell);
// The enter gates of a worker cell: persistence, effect, enough steps.
bool WorkerGatesHold(const DetectorState& s, const CellStats& st);
// The rank indexes of a stage's cells in the last step, busiest first.
std::vector<int32_t> StageRanks(const DetectorState& s, int32_t stage,
                                size_t k);

// The job-level gates now, given the top cells (TopCells).
JobGates GatesNow(const DetectorState& s, const std::vector<int32_t>& top);

// The alert rules for the step just closed; appends events.
void EvaluateAlerts(DetectorState& s, int64_t step,
                    std::vector<AlertEvent>* events);

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_DETECTOR_STATE_H_
