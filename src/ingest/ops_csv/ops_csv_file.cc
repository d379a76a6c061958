// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_file.h"

#include <memory>
#include <string_view>

#include "ingest/common/text_blocks.h"
#include "ingest/common/text_reader.h"
#include "ingest/ops_csv/ops_csv_parser.h"

namespace strag::ingest {

Result<trace::OpsTable> ReadOpsCsvFile(const std::string& path,
                                       const ReadOpsCsvOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<TextReader> reader,
                   TextReader::Open(path, options.block_bytes));
  OpsCsvParser parser(path, reader->text_bytes_hint());
  const TextBlockOptions block_options{
      .block_bytes = options.block_bytes,
      .inflate_on_thread = options.inflate_on_thread};
  RETURN_IF_ERROR(ForEachTextBlock(
      reader.get(), block_options,
      [&parser](std::string_view block) { return parser.Feed(block); }));
  return parser.Finish();
}

}  // namespace strag::ingest
