// SPDX-License-Identifier: Apache-2.0
// Presence: which registered ranks reported each closed step, which went
// silent (missing from `silent_steps` consecutive closed steps) and came
// back, and each rank's warm-up (its first unflagged steps of an epoch are
// not judged; a rank back from silence starts a new epoch).

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_PRESENCE_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_PRESENCE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strag::diagnose::online {

class Presence {
 public:
  // Grows to `ranks` rank indexes; new ranks have missed nothing yet.
  void Resize(int32_t ranks) {
    if (static_cast<size_t>(ranks) > stamp_.size()) Grow(ranks);
  }
  // Marks rank `index` as reporting step `serial`; false when it already
  // did (a duplicate record, to be ignored).
  bool Mark(int32_t index, uint64_t serial);
  bool Reported(int32_t index, uint64_t serial) const {
    return Ix(index) < stamp_.size() && stamp_[Ix(index)] == serial;
  }
  // After the marks of step `serial`: ranks reaching `silent_steps` missed
  // steps are appended to `newly_silent`, silent ranks that reported to
  // `back` (both ascending by index).
  void Close(uint64_t serial, int32_t silent_steps,
             std::vector<int32_t>* newly_silent, std::vector<int32_t>* back);
  // Counts an unflagged step of `index`; true once past its warm-up.
  bool CountUnflagged(int32_t index, int32_t warmup_steps);
  // A rank registered after the last step closed is not silent yet.
  bool silent(int32_t index) const {
    return Ix(index) < silent_.size() && silent_[Ix(index)] != 0;
  }

 private:
  static size_t Ix(int32_t i) { return static_cast<size_t>(i); }
  void Grow(int32_t ranks);
  std::vector<uint64_t> stamp_;  // serial of the last step reported
  std::vector<int32_t> missed_;  // consecutive closed steps missed
  std::vector<int32_t> seen_;    // unflagged steps in this epoch
  std::vector<uint8_t> silent_;
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_PRESENCE_H_
