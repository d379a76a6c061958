// SPDX-License-Identifier: Apache-2.0
#include "trace/ops_table_pack.h"

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
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
    out->PutArray<uint64_t>(e.ends());
    out->PutArray<char>(e.text());
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
    Column<uint64_t> ends = in->GetArray<uint64_t, Column<uint64_t>>();
    const std::vector<char> text = in->GetArray<char>();
    Result<ExtraColumn> e = ExtraColumn::FromParts(
        std::string(name.begin(), name.end()),
        std::string(text.begin(), text.end()), std::move(ends));
    if (!e.ok()) return Internal("UnpackOpsTable: damaged bytes");
    table.extra.push_back(*std::move(e));
  }
  if (!in->ok()) return Internal("UnpackOpsTable: damaged bytes");
  const size_t rows = table.size();
  bool same = true;
  OpsTable::ForEachColumn(table, table, [&](const auto& column, const auto&) {
    same &= column.empty() || column.size() == rows;
  });
  for (const ExtraColumn& e : table.extra) same &= e.size() == rows;
  if (!same) return Internal("UnpackOpsTable: columns of different lengths");
  return table;
}

}  // namespace strag::trace
