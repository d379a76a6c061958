// SPDX-License-Identifier: Apache-2.0
// Whole-file reads: the only file I/O in ingest. Parsers take the bytes.

#ifndef STRAG_SRC_INGEST_COMMON_FILE_H_
#define STRAG_SRC_INGEST_COMMON_FILE_H_

#include <string>

#include "base/status.h"

namespace strag::ingest {

// Returns the whole content of the file at `path`. Works on pipes and other
// files whose size is unknown. Fails with kNotFound "cannot open <path>:
// <reason>" (or "cannot read <path>: <reason>", e.g. for a directory).
Result<std::string> ReadFile(const std::string& path);

// ReadFile, then MaybeGunzip with `path` as the source name: a `.gz` file is
// recognised by its content, not its name.
Result<std::string> ReadFileMaybeGz(const std::string& path);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_FILE_H_
