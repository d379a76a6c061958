// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/ops_csv_file.h"

#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>
#include <string_view>

#include "base/parallel_for.h"
#include "ingest/common/text_blocks.h"
#include "ingest/common/text_reader.h"
#include "ingest/ops_csv/ops_csv_parser.h"

namespace strag::ingest {

Result<trace::OpsTable> ReadOpsCsvFile(const std::string& path,
                                       const ReadOpsCsvOptions& options) {
  const size_t threads =
      options.threads == 0 ? HardwareThreads() : options.threads;
  // By default, blocks big enough for every thread to get all its parts.
  const size_t block_bytes = options.block_bytes != 0 ? options.block_bytes
                             : threads > 1
                                 ? OpsCsvParser::kPartsPerThread * threads *
                                       OpsCsvParser::kMinPartBytes
                                 : size_t{256} << 10;
  ASSIGN_OR_RETURN(std::unique_ptr<TextReader> reader,
                   TextReader::Open(path, block_bytes, options.gzip_engine));
  OpsCsvParser parser(path, reader->text_bytes_hint(),
                      options.limits.max_line_bytes, threads);
  if (!options.ns_durations) parser.DropNsDurations();
  if (options.key_runs) parser.KeepKeysInRuns();
  if (!options.microbatches) parser.KeepMicrobatchesWithExtraOnly();
  const TextBlockOptions block_options{
      .block_bytes = block_bytes,
      .inflate_on_thread = options.inflate_on_thread,
      .sink_refused = [&parser] { return parser.refused(); }};
  // The table is what may not fit: an allocation failure is said with how
  // far the reading got (no exception leaves ingest).
  try {
    RETURN_IF_ERROR(ForEachTextBlock(
        reader.get(), block_options,
        [&parser](std::string_view block) { return parser.Feed(block); }));
    return parser.Finish();
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return Internal(path + ": out of memory while reading it, at text byte " +
                  std::to_string(parser.bytes_fed()) + " with " +
                  std::to_string(parser.rows()) + " rows held");
}

}  // namespace strag::ingest
