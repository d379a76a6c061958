// SPDX-License-Identifier: Apache-2.0
// StrFormat: printf-style formatting into a std::string (for report text);
// Printable: text from the input made safe to echo on a terminal.

#ifndef STRAG_SRC_BASE_STR_FORMAT_H_
#define STRAG_SRC_BASE_STR_FORMAT_H_

#include <string>
#include <string_view>

namespace strag {

std::string StrFormat(const char* fmt, ...)
    __attribute__((format(printf, 1, 2)));

// `text` with every control byte (C0 but newline and tab, and DEL) written
// as \xNN, so that echoed input (a CSV header, a file name, an event name)
// can neither drive the terminal (ESC [2J clears the screen) nor cut a
// message short (NUL). Other bytes, UTF-8 included, are kept.
std::string Printable(std::string_view text);

}  // namespace strag

#endif  // STRAG_SRC_BASE_STR_FORMAT_H_
