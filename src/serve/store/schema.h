// SPDX-License-Identifier: Apache-2.0
// The collector's SQLite schema (docs/live.md, "Database") and how a
// connection is set up: WAL, synchronous=FULL for the writer, short
// read-only connections for readers.

#ifndef STRAG_SRC_SERVE_STORE_SCHEMA_H_
#define STRAG_SRC_SERVE_STORE_SCHEMA_H_

#include <string>

#include "base/status.h"
#include "serve/store/sqlite_db.h"

namespace strag::serve {

inline constexpr int kSchemaVersion = 1;

// Opens the writer connection, creating the file and the tables when
// needed; kInvalidInput for a file that is not a strag database.
Result<Db> OpenWriterDb(const std::string& path, bool full_sync);

// A read-only connection for queries (history, the dashboard's cursors).
Result<Db> OpenReaderDb(const std::string& path);

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_STORE_SCHEMA_H_
