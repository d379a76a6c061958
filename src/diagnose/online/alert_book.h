// SPDX-License-Identifier: Apache-2.0
// Alert bookkeeping (live-monitoring.md §4.5): a Gate is the enter/exit
// hysteresis of one alert key on data time (fire once the enter
// conditions have held continuously for continuity_s; resolve once the
// exit conditions have held for exit_s); the AlertBook numbers alerts,
// keeps the firing ones and writes their events.

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_ALERT_BOOK_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_ALERT_BOOK_H_

#include <cstdint>
#include <map>
#include <vector>

#include "diagnose/online/online_detector.h"

namespace strag::diagnose::online {

struct Gate {
  int64_t since_step = -1, since_ns = 0;  // enter held since; -1: not held
  int64_t exit_since_ns = -1;             // exit held since; -1: not held
  int64_t alert_id = 0;                   // its firing alert, 0: none

  // Updates the enter clock; true when the conditions hold and have held
  // for `continuity_ns` (time to fire, if not firing).
  bool Enter(bool holds, int64_t step, int64_t t_ns, int64_t continuity_ns);
  // Updates the exit clock; true when it has held for `exit_ns`.
  bool Exit(bool holds, int64_t t_ns, int64_t exit_ns);
};

class AlertBook {
 public:
  // Fires `alert` (its id is set here) and appends the event to `events`.
  // Returns the id.
  int64_t Fire(AlertEvent alert, std::vector<AlertEvent>* events);
  // Resolves alert `id` at `step` / `t_ns`: appends the resolved event.
  void Resolve(int64_t id, int64_t step, int64_t t_ns,
               std::vector<AlertEvent>* events);
  // Appends a one-off event (not kept as firing), numbered.
  void Event(AlertEvent event, std::vector<AlertEvent>* events);

  const AlertEvent* Find(int64_t id) const;
  // Firing alerts, by id.
  std::vector<AlertEvent> Active() const;

 private:
  int64_t next_id_ = 1;
  std::map<int64_t, AlertEvent> firing_;
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_ALERT_BOOK_H_
