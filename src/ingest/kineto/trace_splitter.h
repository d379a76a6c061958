// SPDX-License-Identifier: Apache-2.0
// TraceSplitter: finds, in Chrome-trace JSON handed over in pieces, the
// elements of the top-level `traceEvents` array (or of the top-level array
// when the file is a bare list) and the other top-level values, without
// parsing them: the events go on in batches to a real JSON parser.
//
// It validates the top-level grammar (object, keys, colons, commas, the
// commas between events, nothing after the end) and tracks strings and
// escapes exactly, so braces or quotes inside strings never cut an event;
// what is inside an event is left to the parser of the batch. Pieces may be
// cut anywhere: the elements and values handed over depend only on the
// text (a batch ends at `batch_bytes` or at the end of a piece), and every
// complete event is handed over before an error later in the text is
// reported, so that the first error in the text is the one returned,
// however it was cut. Linear time; one copy of the text; memory: the
// current piece and the event it cut, bounded by InputLimits: an event (or
// another top-level value) longer than max_event_bytes, or a top-level key,
// string or number longer than max_token_bytes, is refused with its byte
// offset (whitespace between events is never kept). A UTF-8 byte order
// mark before the JSON is skipped.

#ifndef STRAG_SRC_INGEST_KINETO_TRACE_SPLITTER_H_
#define STRAG_SRC_INGEST_KINETO_TRACE_SPLITTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ingest/common/input_limits.h"
#include "ingest/kineto/json_blocks.h"

namespace strag::ingest::kineto {

// One element of traceEvents: [begin, end) within EventBatch::text.
struct ElementSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Consecutive complete elements of traceEvents, in the splitter's buffer:
// from the first byte of the first element to the last byte of the last
// one (the commas and whitespace between them included). `offset` is the
// byte offset of data[0] in the whole input. The receiver may overwrite
// data[-1] and data[size] (to wrap the elements as a JSON array) if it puts
// them back before returning, and may read kBatchPadding bytes after
// data[size] (their values are arbitrary).
struct EventBatch {
  char* data = nullptr;
  size_t size = 0;
  uint64_t offset = 0;
  const std::vector<ElementSpan>* elements = nullptr;
  // False when the batch has no backslash, so that no string in it has an
  // escape (the splitter saw every byte of it; true: it may have one).
  bool may_have_escapes = true;

  std::string_view text() const { return std::string_view(data, size); }
};
inline constexpr size_t kBatchPadding = 64;

using EventBatchSink = std::function<Status(const EventBatch& batch)>;
// A top-level value other than traceEvents whose key was asked for: `key`
// as written (escapes not undone), `value` its JSON text, `offset` where it
// starts.
using TopLevelValueSink = std::function<Status(
    std::string_view key, std::string_view value, uint64_t offset)>;

class TraceSplitter {
 public:
  // `keys`: the top-level keys whose values go to `on_value`; the others are
  // skipped. Errors are kInvalidInput and start with "`source_name`: ".
  // `limits`: max_token_bytes and max_event_bytes (each at least 1, at most
  // kMaxInputLimitBytes).
  TraceSplitter(std::string_view source_name, size_t batch_bytes,
                std::vector<std::string> keys, EventBatchSink on_batch,
                TopLevelValueSink on_value, const InputLimits& limits = {});

  // Scans the next piece; calls the sinks as batches and values complete.
  // After an error every call returns it again.
  Status Feed(std::string_view piece);
  // The text has ended: hands over what is left, or says why the text is
  // not a complete trace (truncated, no traceEvents).
  Status Finish();

  bool bare_list() const { return bare_list_; }
  uint64_t events() const { return events_; }
  // True when the error refuses the text outright rather than pointing at a
  // mistake in it: a limit broken, or bytes that are no JSON text (binary
  // data). A file reader then stops at once (see TextBlockOptions).
  bool refused() const { return refused_; }
  // Bytes received so far.
  uint64_t bytes_fed() const { return end_offset_; }

 private:
  enum class Mode : uint8_t {
    kStart,       // before the first character
    kKey,         // in the top-level object, before a key or '}'
    kKeyString,   // inside a key
    kColon,       // after a key
    kValue,       // after the colon
    kAfterValue,  // before ',' or '}'
    kEvents,      // inside an events array (block scanner)
    kContainer,   // inside another top-level object or array (block scanner)
    kString,      // inside a top-level string value
    kLiteral,     // inside a top-level number, true, false or null
    kEnd,         // after the end of the top-level value
  };

  Status Scan();
  Status StepSlow(char c, size_t i);
  Status StepToken(char c, size_t i);
  Status StepGrammar(char c, size_t i);
  Status StartValue(char c, size_t i);
  Status EndValue(size_t end);
  Status ScanBlocks();
  Status OnOpen(size_t i, char c);
  Status OnClose(size_t i, char c);
  Status ScanGap(size_t end, bool open_end);
  Status CheckOpenEvent();
  Status CountTokenByte();
  Status AddElement(size_t begin, size_t end);
  Status Flush();
  void Append(std::string_view text);
  void Compact();
  Status Fail(Status status);
  Status Error(uint64_t offset, const std::string& what);
  Status Refuse(uint64_t offset, const std::string& what);
  Status TooLong(uint64_t offset, const std::string& what, uint64_t limit,
                 const char* flag);
  uint64_t Offset(size_t i) const { return buffer_offset_ + i; }

  std::string source_name_;
  size_t batch_bytes_;
  std::vector<std::string> keys_;
  EventBatchSink on_batch_;
  TopLevelValueSink on_value_;
  uint64_t max_token_bytes_;
  uint64_t max_event_bytes_;
  Status status_;
  bool refused_ = false;

  // Text not yet handed over: buffer_[0, size_), with kBatchPadding + 1
  // bytes of room after it.
  std::unique_ptr<char[]> buffer_;
  size_t size_ = 0;
  size_t capacity_ = 0;
  uint64_t buffer_offset_ = 0;  // offset of buffer_[0] in the input
  size_t pos_ = 0;              // next byte of buffer_ to scan
  uint64_t end_offset_ = 0;     // bytes received so far

  Mode mode_ = Mode::kStart;
  bool bare_list_ = false;
  bool saw_events_ = false;
  bool need_key_ = false;  // after ',' in the top-level object
  std::string key_;        // the current top-level key
  bool capture_ = false;   // key_ is wanted: keep its value's text
  size_t value_begin_ = 0;
  uint64_t value_offset_ = 0;   // of the value of key_ in the input
  uint64_t token_offset_ = 0;   // of the current key, string or literal
  uint64_t token_bytes_ = 0;    // its bytes so far
  bool string_escape_ = false;  // kKeyString / kString
  uint8_t bom_bytes_ = 0;       // of a UTF-8 byte order mark at the start

  // Block scanner state (kEvents, kContainer).
  BlockKernel block_kernel_ = BestBlockKernel();
  JsonStringState strings_;  // after the blocks classified (see ScanBlocks)
  // Whether the blocks classified since the last batch was handed over
  // (and the run that held its end) had a backslash; and the last run.
  bool backslash_pending_ = false;
  bool run_backslash_ = false;
  int64_t depth_ = 0;    // 1 = directly inside the scanned container
  std::string openers_;  // kContainer only: the open brackets
  // kEvents: the elements scanned but not yet handed over.
  size_t gap_begin_ = 0;       // end of the last element, or after '['
  size_t element_begin_ = 0;   // of the element being scanned
  bool expect_value_ = true;   // after '[' or ','
  uint64_t array_values_ = 0;  // elements of the current array
  size_t batch_begin_ = 0;
  std::vector<ElementSpan> elements_;
  uint64_t events_ = 0;
};

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_TRACE_SPLITTER_H_
