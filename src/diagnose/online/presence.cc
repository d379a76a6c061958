// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/presence.h"

namespace strag::diagnose::online {

void Presence::Grow(int32_t ranks) {
  const auto n = static_cast<size_t>(ranks);
  stamp_.resize(n, 0);
  missed_.resize(n, 0);
  seen_.resize(n, 0);
  silent_.resize(n, 0);
}

bool Presence::Mark(int32_t index, uint64_t serial) {
  if (stamp_[Ix(index)] == serial) return false;
  stamp_[Ix(index)] = serial;
  return true;
}

void Presence::Close(uint64_t serial, int32_t silent_steps,
                     std::vector<int32_t>* newly_silent,
                     std::vector<int32_t>* back) {
  const int32_t limit = silent_steps < 1 ? 1 : silent_steps;
  for (size_t i = 0; i < stamp_.size(); ++i) {
    const auto index = static_cast<int32_t>(i);
    if (stamp_[i] == serial) {
      missed_[i] = 0;
      if (silent_[i]) {
        silent_[i] = 0;
        seen_[i] = 0;  // a new epoch: warm-up again
        back->push_back(index);
      }
      continue;
    }
    if (++missed_[i] == limit) {
      silent_[i] = 1;
      newly_silent->push_back(index);
    }
    if (missed_[i] > limit) missed_[i] = limit;
  }
}

bool Presence::CountUnflagged(int32_t index, int32_t warmup_steps) {
  int32_t& seen = seen_[Ix(index)];
  if (seen <= warmup_steps) ++seen;
  return seen > warmup_steps;
}

}  // namespace strag::diagnose::online
