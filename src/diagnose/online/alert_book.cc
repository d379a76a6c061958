// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/alert_book.h"

#include <utility>

namespace strag::diagnose::online {

bool Gate::Enter(bool holds, int64_t step, int64_t t_ns,
                 int64_t continuity_ns) {
  if (!holds) {
    since_step = -1;
    return false;
  }
  if (since_step < 0) {
    since_step = step;
    since_ns = t_ns;
  }
  return t_ns - since_ns >= continuity_ns;
}

bool Gate::Exit(bool holds, int64_t t_ns, int64_t exit_ns) {
  if (!holds) {
    exit_since_ns = -1;
    return false;
  }
  if (exit_since_ns < 0) exit_since_ns = t_ns;
  return t_ns - exit_since_ns >= exit_ns;
}

int64_t AlertBook::Fire(AlertEvent alert, std::vector<AlertEvent>* events) {
  alert.id = next_id_++;
  alert.firing = true;
  events->push_back(alert);
  const int64_t id = alert.id;
  firing_.emplace(id, std::move(alert));
  return id;
}

void AlertBook::Resolve(int64_t id, int64_t step, int64_t t_ns,
                        std::vector<AlertEvent>* events) {
  const auto it = firing_.find(id);
  if (it == firing_.end()) return;
  AlertEvent done = std::move(it->second);
  firing_.erase(it);
  done.firing = false;
  done.step = step;
  done.t_ns = t_ns;
  done.summary = "resolved: " + done.summary;
  events->push_back(std::move(done));
}

void AlertBook::Event(AlertEvent event, std::vector<AlertEvent>* events) {
  event.id = next_id_++;
  event.firing = true;
  events->push_back(std::move(event));
}

const AlertEvent* AlertBook::Find(int64_t id) const {
  const auto it = firing_.find(id);
  return it == firing_.end() ? nullptr : &it->second;
}

std::vector<AlertEvent> AlertBook::Active() const {
  std::vector<AlertEvent> out;
  out.reserve(firing_.size());
  for (const auto& [id, alert] : firing_) out.push_back(alert);
  return out;
}

}  // namespace strag::diagnose::online
