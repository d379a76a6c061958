// SPDX-License-Identifier: Apache-2.0
#include "trace/ops_table.h"

#include <cstddef>

#include "base/check.h"

namespace strag::trace {

void OpsTable::KeysToRuns() {
  if (keys_in_runs) return;
  key_runs = KeyRuns();
  for (size_t r = 0; r < size(); ++r) {
    key_runs.Append(r + 1, rank[r], dp[r], pp[r], step[r]);
  }
  rank = {}, dp = {}, pp = {}, step = {};
  keys_in_runs = true;
}

void OpsTable::KeysToColumns() {
  if (!keys_in_runs) return;
  rank.clear(), dp.clear(), pp.clear(), step.clear();
  rank.reserve(size()), dp.reserve(size()), pp.reserve(size());
  step.reserve(size());
  for (size_t k = 0; k < key_runs.size(); ++k) {
    const size_t rows = key_runs.first[k + 1] - key_runs.first[k];
    rank.insert(rank.end(), rows, key_runs.rank[k]);
    dp.insert(dp.end(), rows, key_runs.dp[k]);
    pp.insert(pp.end(), rows, key_runs.pp[k]);
    step.insert(step.end(), rows, key_runs.step[k]);
  }
  key_runs = KeyRuns();
  keys_in_runs = false;
}

void OpsTable::Reserve(size_t rows) {
  rank.reserve(rows);
  dp.reserve(rows);
  pp.reserve(rows);
  step.reserve(rows);
  op_type.reserve(rows);
  seq_id.reserve(rows);
  chunk.reserve(rows);
  microbatch.reserve(rows);
  global_chunk.reserve(rows);
  start_ns.reserve(rows);
  dur_ns.reserve(rows);
}

void OpsTable::Truncate(size_t rows) {
  const auto truncate = [rows](auto& column, const auto& /*unused*/) {
    if (column.size() > rows) column.resize(rows);
  };
  ForEachColumn(*this, *this, truncate);
  for (ExtraColumn& e : extra) e.Truncate(rows);
}

void OpsTable::ClearRows() {
  ForEachColumn(*this, *this, [](auto& column, const auto& /*unused*/) {
    column.clear();
  });
  for (ExtraColumn& e : extra) e.clear();
}

void OpsTable::AppendRows(const OpsTable& other, size_t from, size_t to) {
  STRAG_CHECK(!keys_in_runs && !other.keys_in_runs && !starts_rebased &&
                  !other.starts_rebased,
              "OpsTable::AppendRows: keys in runs or starts rebased");
  const auto f = static_cast<ptrdiff_t>(from), l = static_cast<ptrdiff_t>(to);
  ForEachColumn(*this, other, [f, l](auto& column, const auto& source) {
    if (source.empty()) return;
    column.insert(column.end(), source.begin() + f, source.begin() + l);
  });
  for (size_t e = 0; e < extra.size() && e < other.extra.size(); ++e) {
    if (!other.extra[e].empty()) extra[e].Append(other.extra[e], from, to);
  }
}

}  // namespace strag::trace
