// SPDX-License-Identifier: Apache-2.0
// Collective: the processes that analyse one job together (an MPI
// communicator, threads in a test), seen through the one operation the
// analysis needs from them: every process's bytes, gathered on every
// process in process order. Every process must call it the same number of
// times, in the same order (the analysis is deterministic, so they do).
// No I/O here: the MPI implementation lives in src/dist/.

#ifndef STRAG_SRC_BASE_COLLECTIVE_H_
#define STRAG_SRC_BASE_COLLECTIVE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"

namespace strag {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual size_t rank() const = 0;  // this process, 0 .. size() - 1
  virtual size_t size() const = 0;
  // [p] = what process p passed.
  virtual Result<std::vector<std::string>> AllGather(std::string bytes) = 0;
  // Personal exchange: `to_each[p]` goes to process p (size() of them);
  // [p] of the result = what process p sent to this one. This default
  // gathers everything everywhere (fine for tests and small messages);
  // MPI's sends each process only its own.
  virtual Result<std::vector<std::string>> AllToAll(
      std::vector<std::string> to_each);
};

// Process `rank` of `size`'s share of `n` items: [first, end), contiguous,
// in process order, sizes differing by at most one.
struct Share {
  size_t first = 0, end = 0;
};
inline Share ShareOf(size_t n, size_t rank, size_t size) {
  const size_t base = n / size, extra = n % size;
  const size_t first = rank * base + (rank < extra ? rank : extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

}  // namespace strag

#endif  // STRAG_SRC_BASE_COLLECTIVE_H_
