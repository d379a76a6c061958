// SPDX-License-Identifier: Apache-2.0
// RankTraceBuilder: sorts the events of one Kineto trace, as EventParser
// hands them over, into what a RankTrace is made of (GPU ops, launches,
// CPU comm ops, step spans, CPU ops of a CPU-only trace), keeping only
// what the rows and their linking need; Finish links them and says what
// was skipped and why.

#ifndef STRAG_SRC_INGEST_KINETO_RANK_TRACE_BUILDER_H_
#define STRAG_SRC_INGEST_KINETO_RANK_TRACE_BUILDER_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "ingest/kineto/kineto_event.h"
#include "ingest/kineto/kineto_metadata.h"
#include "ingest/kineto/trace_records.h"
#include "trace/rank_trace.h"

namespace strag::ingest::kineto {

// What a complete event's `cat` makes it.
enum class EventCategory : uint8_t {
  kGpuOp,           // kernel, gpu_memcpy, gpu_memset
  kLaunch,          // cuda_runtime, cuda_driver
  kCpuOp,           // cpu_op, or no category (torch 1.13)
  kUserAnnotation,  // record_function ranges on the CPU
  kIgnored,         // known, not used
  kUnknown,
};

class RankTraceBuilder : public EventConsumer {
 public:
  explicit RankTraceBuilder(std::string_view source_name);

  // Reserves the columns for a text of `text_bytes` (0: nothing to do).
  void Reserve(uint64_t text_bytes);

  bool NeedsArgs(std::string_view ph, std::string_view cat,
                 std::string_view name) const override;
  Status Add(const KinetoEvent& event) override;

  // After the last event: the RankTrace, with rank and world size from
  // `meta`, else from the file name, else `default_rank` (>= 0) with a
  // warning, else kInvalidInput.
  Result<trace::RankTrace> Finish(const KinetoMetadata& meta,
                                  int32_t default_rank);

 private:
  std::optional<EventCategory> CompleteEventCategory(const KinetoEvent& event);
  bool Times(const KinetoEvent& event, int64_t* ts, int64_t* dur);
  void AddGpuOp(const KinetoEvent& event, int64_t ts, int64_t dur);
  void AddInputShape(const KinetoEvent& event, int64_t ts);
  void AddCpuSide(const KinetoEvent& event, bool is_cpu_op, int64_t ts,
                  int64_t end);
  // Records a DataLoader or GC span (kineto_names.h HostKindOf).
  void AddHostSpan(const KinetoEvent& event);
  void AddCandidate(const ThreadKey& thread, int64_t ts, int64_t end,
                    std::string_view name, bool is_comm);
  void NegativeDuration(const KinetoEvent& event);
  void CountCategory(std::map<std::string, int64_t, std::less<>>* counts,
                     std::string_view category);
  CommDetails DetailsFromArgs(const CommArgs& args);
  int64_t IdOf(const JsonId& id);
  ThreadKey ThreadOf(const KinetoEvent& event);
  Status SetRank(const KinetoMetadata& meta, int32_t default_rank);
  void Account();
  void ApplyBaseTime(int64_t base_ns);
  void CompactNames();

  TraceRecords records_;
  std::map<std::string, int64_t, std::less<>> string_ids_;
  // Per thread, the last top-level candidate [start, end): candidates that
  // start inside it are nested and dropped at once (the ops of a thread
  // come in time order in practice; those that do not are sorted later).
  std::map<ThreadKey, std::pair<int64_t, int64_t>> top_level_;
  // Skipped events by phase and by category, counted without building a
  // reason string per event (flow events are a third of a trace).
  std::array<int64_t, 256> phases_{};
  std::map<std::string, int64_t, std::less<>> categories_;
  std::map<std::string, int64_t, std::less<>> unknown_categories_;
  int64_t annotations_ = 0;  // user annotations: neither steps nor comm
  int64_t gloo_ops_ = 0;
  int64_t negative_durations_ = 0;
};

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_RANK_TRACE_BUILDER_H_
