// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_reader.h"

#include "ingest/ops_csv/ops_csv_parser.h"

namespace strag::ingest {

Result<trace::OpsTable> ParseOpsCsv(std::string_view csv,
                                    std::string_view source_name,
                                    uint64_t max_line_bytes) {
  OpsCsvParser parser(source_name, /*text_bytes_hint=*/csv.size(),
                      max_line_bytes);
  RETURN_IF_ERROR(parser.Feed(csv));
  return parser.Finish();
}

}  // namespace strag::ingest
