// SPDX-License-Identifier: Apache-2.0
// ThreadCollective: a Collective of threads in one process, for tests of
// the distributed analysis without MPI: ThreadCollective::Run(k, fn) runs
// fn(collective) on k threads, each with its own rank.

#ifndef STRAG_SRC_BASE_THREAD_COLLECTIVE_H_
#define STRAG_SRC_BASE_THREAD_COLLECTIVE_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "base/collective.h"

namespace strag {

class ThreadCollective {
 public:
  // Runs fn on `size` threads (fn(c) with c.rank() = 0 .. size - 1) and
  // waits for them all.
  static void Run(size_t size, const std::function<void(Collective&)>& fn);

 private:
  class Member;
  explicit ThreadCollective(size_t size) : size_(size), slots_(size) {}
  std::vector<std::string> Gather(size_t rank, std::string bytes);

  const size_t size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> slots_;
  size_t arrived_ = 0, left_ = 0;
  uint64_t round_ = 0;
  std::vector<std::string> result_;
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_THREAD_COLLECTIVE_H_
