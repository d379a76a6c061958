// SPDX-License-Identifier: Apache-2.0
// Status and Result<T>: how errors cross module boundaries (no exceptions).
//
// A Status carries a code and a message that names the input and the place
// ("trace.csv: line 12: field 'duration': -0.5 is negative"). Bad input is
// StatusCode::kInvalidInput, which the CLI maps to exit code 2.

#ifndef STRAG_SRC_BASE_STATUS_H_
#define STRAG_SRC_BASE_STATUS_H_

#include <optional>
#include <string>
#include <utility>

#include "base/check.h"

namespace strag {

enum class StatusCode {
  kOk = 0,
  kInvalidInput,  // malformed or inconsistent user input (exit code 2)
  kNotFound,      // a file or a selected entity does not exist
  kInternal,      // a bug: an invariant did not hold
  kIoError,       // the system failed a read or write (disk full, EIO)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "`context`: message"; used to add the
  // file name or the rank as an error travels outwards.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidInput(std::string message) {
  return Status(StatusCode::kInvalidInput, std::move(message));
}
inline Status NotFound(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status Internal(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}
inline Status IoError(std::string message) {
  return Status(StatusCode::kIoError, std::move(message));
}

// Result<T> holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    STRAG_CHECK(!status_.ok(), "Result constructed from an ok Status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    STRAG_CHECK(ok(), "value() of a failed Result");
    return *value_;
  }
  const T& value() const& {
    STRAG_CHECK(ok(), "value() of a failed Result");
    return *value_;
  }
  T&& value() && {
    STRAG_CHECK(ok(), "value() of a failed Result");
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace strag

#define STRAG_CONCAT_INNER_(a, b) a##b
#define STRAG_CONCAT_(a, b) STRAG_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` (a Status) is not ok.
#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::strag::Status strag_status_ = (expr);        \
    if (!strag_status_.ok()) return strag_status_; \
  } while (0)

// `lhs` = value of `rexpr` (a Result<T>), or returns its Status.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(STRAG_CONCAT_(strag_result_, __LINE__), lhs, rexpr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                           \
  if (!tmp.ok()) return tmp.status();           \
  lhs = std::move(tmp).value()

#endif  // STRAG_SRC_BASE_STATUS_H_
