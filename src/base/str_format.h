// SPDX-License-Identifier: Apache-2.0
// StrFormat: printf-style formatting into a std::string (for report text).

#ifndef STRAG_SRC_BASE_STR_FORMAT_H_
#define STRAG_SRC_BASE_STR_FORMAT_H_

#include <string>

namespace strag {

std::string StrFormat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace strag

#endif  // STRAG_SRC_BASE_STR_FORMAT_H_
