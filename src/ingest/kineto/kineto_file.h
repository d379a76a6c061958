// SPDX-License-Identifier: Apache-2.0
// Kineto trace files: ReadKinetoFile streams one `.json` or `.json.gz`
// through KinetoParser; ListKinetoInputs finds the trace files of a job.

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_FILE_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_FILE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "ingest/common/gunzip_stream.h"
#include "ingest/kineto/kineto_parser.h"
#include "trace/rank_trace.h"

namespace strag::ingest {

struct ReadKinetoOptions {
  KinetoOptions parse;
  // Text bytes parsed at a time, and file bytes read at a time.
  size_t block_bytes = size_t{256} << 10;
  // Inflate gzip on a second thread while parsing. Same result either way.
  bool inflate_on_thread = true;
  // ISA-L where the build has it (several times faster than zlib).
  GzipEngine gzip_engine = GzipEngine::kIsal;
};

// Reads the trace at `path`: the same RankTrace, or the same error, as
// ParseKinetoTrace(ReadFileMaybeGz(path), path), without holding the text:
// a file that starts with the gzip magic is inflated block by block
// (whatever its name). Memory: the rows kept, a few blocks, one batch of
// events (and one event up to options.parse.limits). Errors: kNotFound when
// the file cannot be read; kInvalidInput for damaged gzip (the compressed
// byte offset; it wins over JSON errors, as if the file were inflated
// first, but not over a refusal: a limit broken or binary data stops the
// reading at once) or a bad trace (see KinetoParser::Finish).
Result<trace::RankTrace> ReadKinetoFile(const std::string& path,
                                        const ReadKinetoOptions& options = {});

// The trace files at `path`: the file itself, or the files of the folder
// (not its subfolders) whose names end in ".json" or ".json.gz", sorted by
// name. kNotFound when `path` does not exist; kInvalidInput for a folder
// without such files.
Result<std::vector<std::string>> ListKinetoInputs(const std::string& path);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_FILE_H_
