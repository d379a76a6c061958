// SPDX-License-Identifier: Apache-2.0
// KinetoEvent: the fields of one traceEvents element that the reader uses,
// and EventParser, which reads a batch of elements (from TraceSplitter)
// with simdjson On-Demand: one pass over each event's fields, `args` only
// for the events that need them, no DOM.

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_EVENT_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_EVENT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ingest/kineto/trace_splitter.h"

namespace strag::ingest::kineto {

// A pid or tid as written: Kineto writes numbers, but also strings ("CPU
// functions", "Spans", "PyTorch Profiler"). Read only for the events kept.
struct JsonId {
  std::string_view raw;  // the JSON token, quotes included; empty: absent
};

// The communication args of a kernel or a record_param_comms op (-1 / empty
// = absent).
struct CommArgs {
  std::string_view collective;  // "Collective name"
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int64_t group_size = -1;
  std::string_view group_name;  // "Process Group Name"
  std::string_view group_desc;  // "Process Group Description"
  int64_t group_id = -1;        // "Process Group ID" (older name)
  bool has_ranks = false;
  std::vector<int32_t> group_ranks;  // "Process Group Ranks"
  int64_t seq = -1;                  // "Seq" / "seq"
  int64_t dst_rank = -1;             // "Dst Rank" (a send's peer)
  int64_t src_rank = -1;             // "Src Rank" (a recv's peer)

  bool any() const {
    return !collective.empty() || in_nelems >= 0 || out_nelems >= 0 ||
           group_size >= 0 || !group_name.empty() || group_id >= 0 ||
           seq >= 0 || dst_rank >= 0 || src_rank >= 0;
  }
};

// One element of traceEvents. The views point into the parser's buffers:
// valid while the consumer's Add runs.
struct KinetoEvent {
  uint64_t offset = 0;  // of the element in the input
  bool is_object = false;
  bool has_ph = false;
  bool has_cat = false;
  bool has_name = false;
  std::string_view ph;
  std::string_view cat;
  std::string_view name;
  std::string_view ts;   // the number's text (quotes removed); empty: absent
  std::string_view dur;  // same
  JsonId pid;
  JsonId tid;
  bool args_read = false;  // the consumer asked for args and they parsed
  bool has_stream = false;
  int64_t stream = 0;
  bool has_correlation = false;
  int64_t correlation = 0;
  CommArgs comm;
  // "Input Dims" (record_shapes): the element count of each input, -1 for
  // one without a shape; at most kMaxInputs inputs are kept.
  bool has_input_dims = false;
  std::vector<int64_t> input_numels;
};
inline constexpr size_t kMaxInputs = 16;

// Receives the parsed events of a batch, in order.
class EventConsumer {
 public:
  virtual ~EventConsumer() = default;
  // Whether `args` of an event with these fields are needed (`cat` empty
  // when absent).
  virtual bool NeedsArgs(std::string_view ph, std::string_view cat,
                         std::string_view name) const = 0;
  virtual Status Add(const KinetoEvent& event) = 0;
};

class EventParser {
 public:
  explicit EventParser(std::string_view source_name);
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;
  ~EventParser();

  // Parses the elements of `batch` and hands each to `consumer`. Invalid
  // JSON is kInvalidInput naming the byte offset of the element it is in:
  // "<source>: byte 1234: invalid JSON in an event: <simdjson's reason>".
  Status Parse(const EventBatch& batch, EventConsumer* consumer);

 private:
  struct Impl;  // simdjson's parser and the padded buffer (kept out of here)
  Status JsonError(uint64_t offset, const char* reason) const;

  std::string source_name_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_EVENT_H_
