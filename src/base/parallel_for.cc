// SPDX-License-Identifier: Apache-2.0
#include "base/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace strag {

void ParallelFor(size_t num_tasks, size_t workers,
                 const std::function<void(size_t task, size_t worker)>& fn) {
  workers = std::min(workers, num_tasks);
  if (workers <= 1) {
    for (size_t task = 0; task < num_tasks; ++task) fn(task, 0);
    return;
  }
  std::atomic<size_t> next{0};
  auto loop = [&](size_t worker) {
    for (size_t task = next++; task < num_tasks; task = next++)
      fn(task, worker);
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(loop, w);
  loop(0);
  for (std::thread& t : threads) t.join();
}

size_t HardwareThreads() {
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

}  // namespace strag
