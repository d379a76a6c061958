// SPDX-License-Identifier: Apache-2.0
// InputLimits: how large one piece of a trace's text may be before a reader
// refuses it, so that the memory a reader holds follows what it keeps and
// never what a file (or a gzip bomb) contains. docs/formats/ops-csv.md and
// docs/formats/kineto.md state each limit and what happens past it; the
// CLI raises them with --max-line-bytes, --max-token-bytes and
// --max-event-bytes.

#ifndef STRAG_SRC_INGEST_COMMON_INPUT_LIMITS_H_
#define STRAG_SRC_INGEST_COMMON_INPUT_LIMITS_H_

#include <cstdint>
#include <string>

namespace strag::ingest {

inline constexpr uint64_t kDefaultMaxLineBytes = uint64_t{64} << 20;
inline constexpr uint64_t kDefaultMaxTokenBytes = uint64_t{64} << 20;
inline constexpr uint64_t kDefaultMaxEventBytes = uint64_t{64} << 20;
// The largest limit a reader takes: the Kineto splitter addresses a batch
// of events with 32-bit offsets.
inline constexpr uint64_t kMaxInputLimitBytes = uint64_t{2} << 30;

struct InputLimits {
  // Ops CSV: one line, its line break included (a record whose quoted
  // field holds line breaks counts whole).
  uint64_t max_line_bytes = kDefaultMaxLineBytes;
  // Kineto JSON: one top-level key, string or number (outside traceEvents;
  // inside an event, the event's limit bounds its tokens).
  uint64_t max_token_bytes = kDefaultMaxTokenBytes;
  // Kineto JSON: one element of traceEvents, or one other top-level value
  // (distributedInfo, deviceProperties, ...).
  uint64_t max_event_bytes = kDefaultMaxEventBytes;
};

// "64 MiB", "1 KiB", "1000 bytes": a limit for a message.
std::string LimitText(uint64_t bytes);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_INPUT_LIMITS_H_
