// SPDX-License-Identifier: Apache-2.0
// ParallelFor: run independent tasks on a few threads.
//
// fn(task, worker) is called once for every task in [0, num_tasks), from
// `workers` threads (worker in [0, workers)); tasks are handed out in order.
// Results stay deterministic when fn writes only to its task's own slot and
// to its worker's own scratch. workers <= 1 runs everything on the caller's
// thread. An exception thrown by fn (std::bad_alloc) stops the handing out
// of tasks and is rethrown on the caller's thread after every thread is
// done with it. The helper threads (workers - 1 of them) are kept parked
// between calls; a call that finds them busy (made from inside a task, or
// from another thread at the same time) starts threads of its own.

#ifndef STRAG_SRC_BASE_PARALLEL_FOR_H_
#define STRAG_SRC_BASE_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

namespace strag {

void ParallelFor(size_t num_tasks, size_t workers,
                 const std::function<void(size_t task, size_t worker)>& fn);

// The number of hardware threads (at least 1).
size_t HardwareThreads();

}  // namespace strag

#endif  // STRAG_SRC_BASE_PARALLEL_FOR_H_
