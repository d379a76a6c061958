// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_fields.h"

namespace strag::ingest::ops_csv {

using trace::OpType;

// The ops CSV holds Megatron-LM op types only: the generic ones (compute,
// all-reduce, ...) come from profiler traces and have no place in its model.
constexpr int kNumCsvOpTypes = trace::kNumMegatronOpTypes;

OpTypeLookup::OpTypeLookup() {
  static_assert(kNumCsvOpTypes <= 32);
  for (int i = 0; i < kNumCsvOpTypes; ++i) {
    names_[static_cast<size_t>(i)] = trace::OpTypeName(static_cast<OpType>(i));
    const size_t length = names_[static_cast<size_t>(i)].size();
    if (length < masks_.size()) masks_[length] |= uint32_t{1} << i;
    names_[static_cast<size_t>(i)].copy(padded_[static_cast<size_t>(i)].data(),
                                        padded_[0].size());
  }
}

const OpTypeLookup& GetOpTypeLookup() {
  static const OpTypeLookup lookup;
  return lookup;
}

std::string ExpectedOpTypes() {
  std::string list;
  for (int i = 0; i < kNumCsvOpTypes; ++i) {
    if (i > 0) list += ", ";
    list += trace::OpTypeName(static_cast<OpType>(i));
  }
  return list;
}

std::string Quoted(std::string_view text) {
  constexpr size_t kMaxShown = 60;
  // Built with append(): GCC 12 warns falsely (-Wrestrict) on "\"" + string.
  std::string quoted;
  quoted.reserve(kMaxShown + 5);
  quoted.push_back('"');
  quoted.append(text.substr(0, kMaxShown));
  if (text.size() > kMaxShown) quoted.append("...");
  quoted.push_back('"');
  return quoted;
}

}  // namespace strag::ingest::ops_csv
