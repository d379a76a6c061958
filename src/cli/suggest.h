// SPDX-License-Identifier: Apache-2.0
// "Did you mean": the known word closest to a mistyped one, for the
// messages about an unknown flag or command.

#ifndef STRAG_SRC_CLI_SUGGEST_H_
#define STRAG_SRC_CLI_SUGGEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strag::cli {

// The optimal string alignment distance (Levenshtein with adjacent
// transpositions): edits that turn `a` into `b`. O(|a| |b|).
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, when it is close enough to be a typo: at
// most 1 edit for words of up to 4 letters, 2 up to 8, else 3; a candidate
// that starts with `word` (a prefix of 3 or more letters) also counts.
// Ties go to the first candidate in order.
std::optional<std::string> Closest(std::string_view word,
                                   const std::vector<std::string>& candidates);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_SUGGEST_H_
