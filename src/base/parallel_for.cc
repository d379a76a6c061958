// SPDX-License-Identifier: Apache-2.0
#include "base/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
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
  // An exception (std::bad_alloc) in a task stops the handing out of tasks
  // and is rethrown on the caller's thread once every thread has joined,
  // so that the command can report it instead of std::terminate.
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto loop = [&](size_t worker) {
    try {
      for (size_t task = next++; task < num_tasks; task = next++) {
        fn(task, worker);
      }
    } catch (...) {
      next = num_tasks;
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (size_t w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(loop, w);
    } catch (const std::exception&) {
      break;  // no more threads: the ones started (and this one) do the work
    }
  }
  loop(0);
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

size_t HardwareThreads() {
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

}  // namespace strag
