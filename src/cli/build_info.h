// SPDX-License-Identifier: Apache-2.0
// What `strag --version` says: the version, the commit it was built from,
// the compiler and the optional features compiled in.

#ifndef STRAG_SRC_CLI_BUILD_INFO_H_
#define STRAG_SRC_CLI_BUILD_INFO_H_

#include <string>

namespace strag::cli {

// "strag 0.13.0 (commit eff815a, GCC 12.2.0, Release; ISA-L inflate: yes)".
std::string VersionText();

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_BUILD_INFO_H_
