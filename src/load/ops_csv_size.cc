// SPDX-License-Identifier: Apache-2.0
#include "load/ops_csv_size.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include "ingest/common/text_reader.h"
#include "ingest/ops_csv/ops_csv_schema.h"

namespace strag::load {

Result<OpsCsvSize> EstimateOpsCsvSize(const std::string& path) {
  constexpr size_t kSample = size_t{1} << 20;
  ASSIGN_OR_RETURN(
      std::unique_ptr<ingest::TextReader> reader,
      ingest::TextReader::Open(path, kSample, ingest::GzipEngine::kIsal));
  std::vector<char> text(kSample);
  size_t got = 0;
  while (got < kSample) {
    Result<size_t> n = reader->Read(text.data() + got, kSample - got);
    if (!n.ok() || *n == 0) break;  // damage is the reader's to report
    got += *n;
  }
  OpsCsvSize size;
  // The header's fields that no column of the schema names.
  const std::string_view sample(text.data(), got);
  const std::string_view header = sample.substr(0, sample.find('\n'));
  for (size_t from = 0; from <= header.size();) {
    size_t comma = header.find(',', from);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view name = header.substr(from, comma - from);
    if (name.ends_with('\r')) name.remove_suffix(1);
    size.extra_columns += std::find(ingest::ops_csv::kColumnNames.begin(),
                                    ingest::ops_csv::kColumnNames.end(),
                                    name) == ingest::ops_csv::kColumnNames.end();
    from = comma + 1;
  }
  const auto lines = static_cast<uint64_t>(std::count(
      text.begin(), text.begin() + static_cast<ptrdiff_t>(got), '\n'));
  const uint64_t used = reader->file_bytes_used();
  size.whole = got < kSample;
  if (size.whole) {  // the header and every row
    size.rows = lines > 0 ? lines - 1 : 0;
    return size;
  }
  if (lines == 0 || used == 0 || reader->file_bytes() == 0) return size;
  size.text_per_byte = static_cast<double>(got) / static_cast<double>(used);
  const double text_bytes =
      static_cast<double>(reader->file_bytes()) * size.text_per_byte;
  size.rows = static_cast<uint64_t>(text_bytes / static_cast<double>(got) *
                                    static_cast<double>(lines));
  return size;
}

bool OpsCsvSize::HeldWindowsTakeLess() const {
  constexpr uint64_t kTableBytesPerOp = 40;
  constexpr uint64_t kHeldBytesPerOp = 16;
  constexpr uint64_t kHeldMachineryBytes = uint64_t{192} << 20;
  const uint64_t per_op =
      kTableBytesPerOp + kInMemoryBytesPerExtraColumn * extra_columns;
  return rows > kHeldMachineryBytes / (per_op - kHeldBytesPerOp);
}

uint64_t OpsCsvSize::InMemoryBytes() const {
  const uint64_t per_op =
      kInMemoryBytesPerOp + kInMemoryBytesPerExtraColumn * extra_columns;
  const uint64_t cap = uint64_t{1} << 62;
  return rows > cap / per_op ? cap : rows * per_op;
}

}  // namespace strag::load
