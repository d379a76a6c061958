// SPDX-License-Identifier: Apache-2.0
// InputNotes: what the report says about its input besides the analysis:
// which files were read, what was skipped or is missing, and the clock
// offsets found between ranks. Filled at the edge (cli), rendered by the
// terminal, JSON and HTML views.

#ifndef STRAG_SRC_REPORT_INPUT_NOTES_H_
#define STRAG_SRC_REPORT_INPUT_NOTES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strag::report {

struct ClockNotes {
  std::vector<std::pair<int32_t, int64_t>> offset_ns;  // (rank, offset)
  int64_t max_abs_offset_ns = 0;                       // over the ranks
  double residual_max_us = 0;  // |aligned end - collective's end|, max
  double residual_p99_us = 0;
  int64_t collectives = 0;  // matched collectives the offsets rest on
  // Absolute clocks, causal as written: not aligned (offsets 0); the
  // residuals are the collectives' end-time spread.
  bool kept_raw = false;
};

inline constexpr size_t kMaxListedMissingRanks = 4096;

struct InputNotes {
  std::string format;  // "kineto"
  int64_t files = 0;   // files read without error
  int64_t events = 0;  // events in them
  int32_t world_size = 0;
  // Ranks of the world without a usable file: how many, and the first
  // kMaxListedMissingRanks of them (the world is a claim of the traces and
  // must not size anything: one file claiming 10^9 ranks is 4 files read).
  int64_t missing_rank_count = 0;
  std::vector<int32_t> missing_ranks;
  // Problems with the input (a file that could not be read, a rank claimed
  // twice, a collective a rank never joins, a step dropped), one line each.
  std::vector<std::string> warnings;
  // What was skipped, by reason, summed over files.
  std::vector<std::pair<std::string, int64_t>> skipped;
  ClockNotes clock;
  // The job's layout and how it was found ("p2p chains: 2 pipeline(s) of 4
  // stages", "flags: DP 2 x PP 4").
  std::string layout;
  // Every trace holds CPU ops on threads (a gloo job): the time lost is CPU
  // time, and it has no price unless one is given.
  bool cpu_only = false;
};

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_INPUT_NOTES_H_
