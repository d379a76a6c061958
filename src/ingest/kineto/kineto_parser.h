// SPDX-License-Identifier: Apache-2.0
// The Kineto / Chrome-trace JSON reader: one rank's `torch.profiler` trace
// (a `{"traceEvents": [...], ...}` object, or a bare `[...]` list as torch
// 1.13 writes it) -> trace::RankTrace. docs/formats/kineto.md says what is
// read and how each field is interpreted.
//
// Streaming: KinetoParser takes the text in pieces cut anywhere and never
// holds more than a batch of events (~256 KiB, or one event up to
// InputLimits::max_event_bytes) plus what it keeps of them; the result,
// errors included, does not depend on where the text was cut.
// Pure: no I/O (see kineto_file.h for files).

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_PARSER_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ingest/common/input_limits.h"
#include "trace/rank_trace.h"

namespace strag::ingest {

struct KinetoOptions {
  // The rank of a trace whose distributedInfo and file name say none, when
  // the caller knows it (e.g. a single file); -1: such a trace is an error,
  // kRankLater: its rank stays -1 for the caller to assign (a folder of
  // files named as tensorboard_trace_handler names them).
  int32_t default_rank = -1;
  static constexpr int32_t kRankLater = -2;
  // JSON bytes of events parsed at a time (tests make it tiny).
  size_t batch_bytes = size_t{256} << 10;
  // Expected size of the text, 0 if unknown: the columns are reserved from
  // it (as virtual memory; only what is filled is touched).
  uint64_t expected_bytes = 0;
  // The longest event, top-level value and token taken (max_line_bytes is
  // not used): longer ones are refused, so memory never follows the text.
  InputLimits limits = {};
};

class KinetoParser {
 public:
  // `source_name` labels messages and may carry the rank ("rank-3.json").
  explicit KinetoParser(std::string_view source_name,
                        const KinetoOptions& options = {});
  KinetoParser(const KinetoParser&) = delete;
  KinetoParser& operator=(const KinetoParser&) = delete;
  ~KinetoParser();

  // The next piece of the text. Returns the first error, then the same
  // error on every later call (and from Finish).
  Status Feed(std::string_view piece);

  // The text has ended. Errors (kInvalidInput, one message naming the
  // source and the byte offset): not JSON, truncated JSON, invalid JSON in
  // an event or in distributedInfo, no traceEvents, no rank. Events the
  // reader does not use are counted in RankTrace::skipped, never an error.
  Result<trace::RankTrace> Finish();

  // Whether the error refuses the text outright (a limit broken, binary
  // data): a file reader need not read on (TraceSplitter::refused).
  bool refused() const;
  // Text bytes fed so far, and events found in them (for messages).
  uint64_t bytes_fed() const;
  uint64_t events() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The trace in `json` (already inflated): one Feed and Finish.
Result<trace::RankTrace> ParseKinetoTrace(std::string_view json,
                                          std::string_view source_name,
                                          const KinetoOptions& options = {});

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_PARSER_H_
