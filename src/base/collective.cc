// SPDX-License-Identifier: Apache-2.0
#include "base/collective.h"

#include <utility>

#include "base/byte_pack.h"

namespace strag {

Result<std::vector<std::string>> Collective::AllToAll(
    std::vector<std::string> to_each) {
  if (to_each.size() != size()) {
    return Internal("AllToAll: one message per process expected");
  }
  BytePacker mine;
  for (const std::string& m : to_each) mine.PutArray<char>(m);
  to_each = {};
  ASSIGN_OR_RETURN(std::vector<std::string> all, AllGather(mine.Take()));
  std::vector<std::string> out(size());
  for (size_t p = 0; p < size(); ++p) {
    ByteUnpacker in(all[p]);
    for (size_t q = 0; q < size(); ++q) {
      std::vector<char> m = in.GetArray<char>();
      if (q == rank()) out[p].assign(m.begin(), m.end());
    }
    if (!in.done()) return Internal("AllToAll: damaged bytes");
    all[p] = {};
  }
  return out;
}

}  // namespace strag
