// SPDX-License-Identifier: Apache-2.0
#include "trace/ops_table_pack.h"

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "base/check.h"

namespace strag::trace {

void PackOpsTable(const OpsTable& table, BytePacker* out) {
  STRAG_CHECK(!table.keys_in_runs && !table.starts_rebased,
              "PackOpsTable: keys in runs or starts rebased");
  OpsTable::ForEachColumn(table, table, [out](const auto& column, const auto&) {
    using T = typename std::decay_t<decltype(column)>::value_type;
    out->PutArray<T>(column);
  });
  out->Put<uint64_t>(table.extra.size());
  for (const ExtraColumn& e : table.extra) {
    out->PutArray<char>(e.name);
    std::vector<uint64_t> lengths;
    std::string text;
    lengths.reserve(e.values.size());
    for (const std::string& v : e.values) {
      lengths.push_back(v.size());
      text += v;
    }
    out->PutArray<uint64_t>(lengths);
    out->PutArray<char>(text);
  }
}

Result<OpsTable> UnpackOpsTable(ByteUnpacker* in) {
  OpsTable table;
  OpsTable::ForEachColumn(table, table, [in](auto& column, const auto&) {
    using Vector = std::decay_t<decltype(column)>;
    column = in->GetArray<typename Vector::value_type, Vector>();
  });
  const auto extras = in->Get<uint64_t>();
  for (uint64_t k = 0; in->ok() && k < extras; ++k) {
    const std::vector<char> name = in->GetArray<char>();
    const std::vector<uint64_t> lengths = in->GetArray<uint64_t>();
    const std::vector<char> text = in->GetArray<char>();
    ExtraColumn& e = table.extra.emplace_back();
    e.name.assign(name.begin(), name.end());
    e.values.reserve(lengths.size());
    uint64_t at = 0;
    for (const uint64_t n : lengths) {
      if (n > text.size() - at)
        return Internal("UnpackOpsTable: damaged bytes");
      e.values.emplace_back(text.data() + at, n);
      at += n;
    }
  }
  if (!in->ok()) return Internal("UnpackOpsTable: damaged bytes");
  const size_t rows = table.size();
  bool same = true;
  OpsTable::ForEachColumn(table, table, [&](const auto& column, const auto&) {
    same &= column.empty() || column.size() == rows;
  });
  for (const ExtraColumn& e : table.extra) same &= e.values.size() == rows;
  if (!same) return Internal("UnpackOpsTable: columns of different lengths");
  return table;
}

}  // namespace strag::trace
