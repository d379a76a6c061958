// SPDX-License-Identifier: Apache-2.0
// MpiCollective: base/collective.h's Collective over an MPI communicator
// (MPI_COMM_WORLD for strag-mpi). The only file that includes mpi.h.

#ifndef STRAG_SRC_DIST_MPI_COLLECTIVE_H_
#define STRAG_SRC_DIST_MPI_COLLECTIVE_H_

#include <string>
#include <vector>

#include "base/collective.h"

namespace strag::dist {

class MpiCollective : public Collective {
 public:
  MpiCollective();  // MPI_COMM_WORLD; MPI must be initialised
  size_t rank() const override { return rank_; }
  size_t size() const override { return size_; }
  // MPI_Allgatherv while the total fits MPI's int counts, else each
  // process's bytes broadcast in pieces of 1 GiB.
  Result<std::vector<std::string>> AllGather(std::string bytes) override;
  // Pairwise MPI_Sendrecv rounds: each process receives only its own.
  Result<std::vector<std::string>> AllToAll(
      std::vector<std::string> to_each) override;

 private:
  size_t rank_ = 0, size_ = 1;
};

}  // namespace strag::dist

#endif  // STRAG_SRC_DIST_MPI_COLLECTIVE_H_
