// SPDX-License-Identifier: Apache-2.0
#include "base/parallel_for.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace strag {
namespace {

// Threads kept for ParallelFor's helpers: started on first use, as many as
// the most any call has asked for, parked between calls. A thread started
// and joined per call cost ~40 us on the 2-core VM, and an analysis of
// trace-AR made 17 such calls. One call at a time has them; a call made
// while they are busy (from inside a task, or from another thread) or in a
// process forked since they started uses threads of its own, as before.
// The pool is never destroyed: parked threads end with the process.
class HelperPool {
 public:
  // Runs loop(1) ... loop(helpers) on parked threads and loop(0) on this
  // one, returning when all have returned; false (nothing run) when the
  // pool cannot take the call. `loop` must not throw.
  bool Run(size_t helpers, const std::function<void(size_t)>& loop) {
    {
      const std::lock_guard lock(mutex_);
      if (busy_ || getpid() != pid_) return false;
      while (parked_ < helpers) {
        try {
          std::thread(&HelperPool::Park, this, parked_).detach();
        } catch (const std::exception&) {
          break;  // no more threads: the ones there (and this one) do it
        }
        ++parked_;
      }
      if (parked_ == 0) return false;
      busy_ = true;
      loop_ = &loop;
      wanted_ = std::min(helpers, parked_);
      running_ = wanted_;
      ++generation_;
    }
    wake_.notify_all();
    loop(0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return running_ == 0; });
    busy_ = false;
    loop_ = nullptr;
    return true;
  }

 private:
  // Parked thread `index` (worker index + 1): runs the loop of every call
  // that wants it.
  void Park(size_t index) {
    std::unique_lock lock(mutex_);
    // Started by a call, which has made generation_ at least 1 before this
    // thread can take the lock, and wants it: no wait the first time.
    uint64_t seen = 0;
    while (true) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (!busy_ || index >= wanted_) continue;
      const auto* loop = loop_;
      lock.unlock();
      (*loop)(index + 1);
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const pid_t pid_ = getpid();
  size_t parked_ = 0;
  bool busy_ = false;
  uint64_t generation_ = 0;
  size_t wanted_ = 0;   // helpers of the current call
  size_t running_ = 0;  // of them, those not yet done
  const std::function<void(size_t)>* loop_ = nullptr;
};

HelperPool& Pool() {
  static HelperPool* const pool = new HelperPool;  // never destroyed
  return *pool;
}

// The same with threads started for this call and joined.
void RunOnNewThreads(size_t helpers, const std::function<void(size_t)>& loop) {
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (size_t w = 1; w <= helpers; ++w) {
    try {
      threads.emplace_back(loop, w);
    } catch (const std::exception&) {
      break;  // no more threads: the ones started (and this one) do the work
    }
  }
  loop(0);
  for (std::thread& t : threads) t.join();
}

}  // namespace

void ParallelFor(size_t num_tasks, size_t workers,
                 const std::function<void(size_t task, size_t worker)>& fn) {
  workers = std::min(workers, num_tasks);
  if (workers <= 1) {
    for (size_t task = 0; task < num_tasks; ++task) fn(task, 0);
    return;
  }
  // An exception (std::bad_alloc) in a task stops the handing out of tasks
  // and is rethrown on the caller's thread once every thread is done, so
  // that the command can report it instead of std::terminate.
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const std::function<void(size_t)> loop = [&](size_t worker) {
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
  if (!Pool().Run(workers - 1, loop)) RunOnNewThreads(workers - 1, loop);
  if (failure) std::rethrow_exception(failure);
}

size_t HardwareThreads() {
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

}  // namespace strag
