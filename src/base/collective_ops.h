// SPDX-License-Identifier: Apache-2.0
// What the distributed analysis builds on Collective::AllGather: series
// concatenated in process order, and one value from every process.

#ifndef STRAG_SRC_BASE_COLLECTIVE_OPS_H_
#define STRAG_SRC_BASE_COLLECTIVE_OPS_H_

#include <string>
#include <vector>

#include "base/byte_pack.h"
#include "base/collective.h"
#include "base/status.h"

namespace strag {

// Replaces each of `series` (the same count on every process) by the
// concatenation of every process's, in process order: with each process
// holding its share of the steps, a per-step series of the whole job.
template <typename T>
Status AllGatherConcat(Collective* c, const std::vector<std::vector<T>*>& series) {
  BytePacker out;
  for (const std::vector<T>* s : series) out.PutArray<T>(*s);
  ASSIGN_OR_RETURN(const std::vector<std::string> all, c->AllGather(out.Take()));
  for (std::vector<T>* s : series) s->clear();
  for (const std::string& bytes : all) {
    ByteUnpacker in(bytes);
    for (std::vector<T>* s : series) {
      const std::vector<T> part = in.GetArray<T>();
      s->insert(s->end(), part.begin(), part.end());
    }
    if (!in.done()) return Internal("AllGatherConcat: damaged bytes");
  }
  return Status::Ok();
}

// [p] = process p's x.
template <typename T>
Result<std::vector<T>> AllGatherValue(Collective* c, T x) {
  BytePacker out;
  out.Put<T>(x);
  ASSIGN_OR_RETURN(const std::vector<std::string> all, c->AllGather(out.Take()));
  std::vector<T> values;
  for (const std::string& bytes : all) {
    ByteUnpacker in(bytes);
    values.push_back(in.Get<T>());
    if (!in.done()) return Internal("AllGatherValue: damaged bytes");
  }
  return values;
}

}  // namespace strag

#endif  // STRAG_SRC_BASE_COLLECTIVE_OPS_H_
