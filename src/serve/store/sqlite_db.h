// SPDX-License-Identifier: Apache-2.0
// A thin RAII layer over SQLite: a connection and prepared statements whose
// errors come back as Status ("db FILE: ...") instead of codes.

#ifndef STRAG_SRC_SERVE_STORE_SQLITE_DB_H_
#define STRAG_SRC_SERVE_STORE_SQLITE_DB_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace strag::serve {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt();
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Parameters are 1-based, as in SQLite.
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, double v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& BindNull(int i);
  // Steps once: true with a row, false when done; errors as Status.
  Result<bool> Step();
  // Runs to completion (an INSERT / UPDATE) and resets.
  Status Run();
  void Reset();

  int64_t Int(int col) const;
  double Real(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class Db {
 public:
  Db() = default;
  ~Db();
  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Opens (creating when `create`) with a busy timeout of 5 s.
  static Result<Db> Open(const std::string& path, bool create, bool read_only);

  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  int64_t Changes() const;
  const std::string& path() const { return path_; }

 private:
  Status Error(std::string_view what) const;
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace strag::serve

#endif  // STRAG_SRC_SERVE_STORE_SQLITE_DB_H_
