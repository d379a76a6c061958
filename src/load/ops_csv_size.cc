// SPDX-License-Identifier: Apache-2.0
#include "load/ops_csv_size.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "ingest/common/text_reader.h"

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

}  // namespace strag::load
