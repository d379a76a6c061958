// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_file.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <new>
#include <stdexcept>
#include <system_error>

#include "ingest/common/text_blocks.h"
#include "ingest/common/text_reader.h"

namespace strag::ingest {
Result<trace::RankTrace> ReadKinetoFile(const std::string& path,
                                        const ReadKinetoOptions& options) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<TextReader> reader,
      TextReader::Open(path, options.block_bytes, options.gzip_engine));
  KinetoOptions parse = options.parse;
  if (parse.expected_bytes == 0)
    parse.expected_bytes = reader->text_bytes_hint();
  KinetoParser parser(path, parse);
  TextBlockOptions blocks;
  blocks.block_bytes = options.block_bytes;
  blocks.inflate_on_thread = options.inflate_on_thread;
  blocks.sink_refused = [&parser] { return parser.refused(); };
  // An allocation failure is said with how far the reading got (no
  // exception leaves ingest).
  try {
    RETURN_IF_ERROR(ForEachTextBlock(
        reader.get(), blocks,
        [&parser](std::string_view block) { return parser.Feed(block); }));
    return parser.Finish();
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return Internal(path + ": out of memory while reading it, at text byte " +
                  std::to_string(parser.bytes_fed()) + " after " +
                  std::to_string(parser.events()) + " events");
}

Result<std::vector<std::string>> ListKinetoInputs(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) {
    return NotFound("cannot open " + path + ": no such file or directory");
  }
  if (!fs::is_directory(status)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (fs::directory_iterator it(path, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!(name.ends_with(".json") || name.ends_with(".json.gz"))) continue;
    std::error_code type_error;
    if (!it->is_regular_file(type_error)) continue;
    files.push_back(it->path().string());
  }
  if (error) return NotFound("cannot list " + path + ": " + error.message());
  if (files.empty()) {
    return InvalidInput(path + ": no .json or .json.gz trace files in it");
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace strag::ingest
