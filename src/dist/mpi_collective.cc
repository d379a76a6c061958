// SPDX-License-Identifier: Apache-2.0
#include "dist/mpi_collective.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "base/str_format.h"

namespace strag::dist {
namespace {

Status Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Internal(StrFormat("%s failed: %.*s", what, len, text));
}

}  // namespace

MpiCollective::MpiCollective() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank_ = static_cast<size_t>(rank);
  size_ = static_cast<size_t>(size);
}

Result<std::vector<std::string>> MpiCollective::AllGather(std::string bytes) {
  const auto mine = static_cast<uint64_t>(bytes.size());
  std::vector<uint64_t> sizes(size_);
  RETURN_IF_ERROR(Check(MPI_Allgather(&mine, 1, MPI_UINT64_T, sizes.data(), 1,
                                      MPI_UINT64_T, MPI_COMM_WORLD),
                        "MPI_Allgather"));
  uint64_t total = 0;
  for (uint64_t s : sizes) total += s;
  std::vector<std::string> out(size_);
  for (size_t p = 0; p < size_; ++p) out[p].resize(sizes[p]);
  if (total <= static_cast<uint64_t>(INT_MAX)) {
    std::vector<int> counts(size_), displs(size_);
    std::string all(total, '\0');
    for (size_t p = 0, at = 0; p < size_; at += sizes[p], ++p) {
      counts[p] = static_cast<int>(sizes[p]);
      displs[p] = static_cast<int>(at);
    }
    RETURN_IF_ERROR(Check(
        MPI_Allgatherv(bytes.data(), static_cast<int>(mine), MPI_BYTE,
                       all.data(), counts.data(), displs.data(), MPI_BYTE,
                       MPI_COMM_WORLD),
        "MPI_Allgatherv"));
    for (size_t p = 0; p < size_; ++p) {
      std::copy_n(all.begin() + displs[p], sizes[p], out[p].begin());
    }
    return out;
  }
  out[rank_] = std::move(bytes);
  constexpr uint64_t kPiece = uint64_t{1} << 30;
  for (size_t p = 0; p < size_; ++p) {
    for (uint64_t at = 0; at < sizes[p]; at += kPiece) {
      const auto n = static_cast<int>(std::min(kPiece, sizes[p] - at));
      RETURN_IF_ERROR(Check(MPI_Bcast(out[p].data() + at, n, MPI_BYTE,
                                      static_cast<int>(p), MPI_COMM_WORLD),
                            "MPI_Bcast"));
    }
  }
  return out;
}

// K - 1 rounds of pairwise MPI_Sendrecv (round r: to rank + r, from
// rank - r), each message in pieces of at most 1 GiB: no buffer beyond the
// messages themselves, and any size.
Result<std::vector<std::string>> MpiCollective::AllToAll(
    std::vector<std::string> to_each) {
  if (to_each.size() != size_) {
    return Internal("AllToAll: one message per process expected");
  }
  constexpr uint64_t kPiece = uint64_t{1} << 30;
  std::vector<std::string> out(size_);
  out[rank_] = std::move(to_each[rank_]);
  for (size_t r = 1; r < size_; ++r) {
    const auto to = static_cast<int>((rank_ + r) % size_);
    const auto from = static_cast<int>((rank_ + size_ - r) % size_);
    std::string& send = to_each[static_cast<size_t>(to)];
    std::string& recv = out[static_cast<size_t>(from)];
    const uint64_t send_size = send.size();
    uint64_t recv_size = 0;
    RETURN_IF_ERROR(Check(
        MPI_Sendrecv(&send_size, 1, MPI_UINT64_T, to, 0, &recv_size, 1,
                     MPI_UINT64_T, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Sendrecv"));
    recv.resize(recv_size);
    for (uint64_t at = 0; at < std::max(send_size, recv_size); at += kPiece) {
      const auto n_send = static_cast<int>(
          at < send_size ? std::min(kPiece, send_size - at) : 0);
      const auto n_recv = static_cast<int>(
          at < recv_size ? std::min(kPiece, recv_size - at) : 0);
      RETURN_IF_ERROR(Check(
          MPI_Sendrecv(send.data() + std::min(at, send_size), n_send, MPI_BYTE,
                       to, 1, recv.data() + std::min(at, recv_size), n_recv,
                       MPI_BYTE, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "MPI_Sendrecv"));
    }
    send = std::string();
  }
  return out;
}

}  // namespace strag::dist
