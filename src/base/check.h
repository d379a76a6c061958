// SPDX-License-Identifier: Apache-2.0
// STRAG_CHECK: a programmer-error check that stays on in every build type
// (NDEBUG too). When `condition` is false it prints the file, the line, the
// condition and `message` to stderr, then aborts. For broken contracts
// between modules (a Result's value read without checking it, arrays of
// the wrong size handed to the replay), never for bad input: bad input is a
// Status (status.h).

#ifndef STRAG_SRC_BASE_CHECK_H_
#define STRAG_SRC_BASE_CHECK_H_

namespace strag::internal {

[[noreturn]] void CheckFailed(const char* file, int line,
                              const char* condition, const char* message);

}  // namespace strag::internal

#define STRAG_CHECK(condition, message)                                    \
  do {                                                                     \
    if (__builtin_expect(!(condition), 0)) {                               \
      ::strag::internal::CheckFailed(__FILE__, __LINE__, #condition,       \
                                     message);                             \
    }                                                                      \
  } while (false)

#endif  // STRAG_SRC_BASE_CHECK_H_
