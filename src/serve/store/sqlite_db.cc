// SPDX-License-Identifier: Apache-2.0
#include "serve/store/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace strag::serve {

Stmt::~Stmt() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}
Stmt::Stmt(Stmt&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)) {}
Stmt& Stmt::operator=(Stmt&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Stmt& Stmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Stmt& Stmt::Bind(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
Stmt& Stmt::Bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()),
                    SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Stmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return IoError(std::string("sqlite: ") + sqlite3_errmsg(db_));
}

Status Stmt::Run() {
  Result<bool> r = Step();
  Reset();
  return r.ok() ? Status::Ok() : r.status();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Stmt::Real(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Stmt::Text(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  return t == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(t),
                                    static_cast<size_t>(
                                        sqlite3_column_bytes(stmt_, col)));
}
bool Stmt::IsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

Db::~Db() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}
Db::Db(Db&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}
Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Result<Db> Db::Open(const std::string& path, bool create, bool read_only) {
  Db db;
  db.path_ = path;
  const int flags = (read_only ? SQLITE_OPEN_READONLY
                               : SQLITE_OPEN_READWRITE |
                                     (create ? SQLITE_OPEN_CREATE : 0)) |
                    SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db.db_, flags, nullptr) != SQLITE_OK) {
    Status s = db.Error("cannot open");
    return s;
  }
  sqlite3_busy_timeout(db.db_, 5000);
  return db;
}

Status Db::Exec(std::string_view sql) {
  char* err = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = IoError("db " + path_ + ": " + (err ? err : "error"));
    sqlite3_free(err);
    return s;
  }
  return Status::Ok();
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt,
                         nullptr) != SQLITE_OK) {
    return Error("prepare");
  }
  return Stmt(db_, stmt);
}

int64_t Db::Changes() const { return sqlite3_changes64(db_); }

Status Db::Error(std::string_view what) const {
  return IoError("db " + path_ + ": " + std::string(what) + ": " +
                 (db_ ? sqlite3_errmsg(db_) : "out of memory"));
}

}  // namespace strag::serve
