// SPDX-License-Identifier: Apache-2.0
// The records the live agents send (docs/formats/agent-protocol.md): one
// NDJSON line each, in one of three kinds, every one keyed by its stream
// (job, rank, epoch) and numbered by `seq` within it.
//
//   rank  the process registers: its coordinates, host, device, price
//   step  one closed training step of one rank: phase and collective times
//   drop  the agent lost records seq first..last (its buffer was full)
//
// Pure data; ParseAgentNdjson (agent_parser.h) fills an AgentBatch.

#ifndef STRAG_SRC_INGEST_AGENT_AGENT_RECORDS_H_
#define STRAG_SRC_INGEST_AGENT_AGENT_RECORDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/coll_group.h"

namespace strag::ingest::agent {

enum class RecordKind : uint8_t { kRank, kStep, kDrop };

// Step flags: steps the detector must not judge.
enum StepFlag : uint32_t {
  kFlagWarmup = 1u << 0,
  kFlagCheckpoint = 1u << 1,
  kFlagEval = 1u << 2,
  kFlagSkipped = 1u << 3,
  kFlagCapture = 1u << 4,  // a profiler capture ran during the step
};

// A "rank" record: who the process is. Coordinates are -1 when unknown.
struct RankInfo {
  int32_t world_size = 0;
  int32_t dp = -1, pp = -1, tp = -1, cp = -1;
  int32_t dp_size = 0, pp_size = 0, tp_size = 0, cp_size = 0;
  int32_t local_rank = -1;
  int32_t microbatches = 0;
  int64_t pid = 0;
  double usd_per_gpu_hour = 0;  // 0: not given
  std::string host, device, torch_version, agent_version;
};

// A "step" record. Times are integer nanoseconds measured by the rank
// itself; t_end_ns is its wall clock (Unix epoch) at the step's end and is
// compared across ranks only loosely (no clock alignment is assumed).
struct StepRecord {
  int64_t step = 0;
  int64_t t_end_ns = 0;
  int64_t step_ns = 0;  // from the previous step boundary to this one
  int64_t data_ns = 0, fwd_ns = 0, bwd_ns = 0, opt_ns = 0;
  int64_t gc_ns = 0;  // Python GC pauses inside the step
  int32_t gc_n = 0;
  int32_t gc_gen = -1;  // the oldest generation collected, -1: none
  trace::CollNs coll_ns = {};  // time inside collectives, by group
  trace::CollCounts coll_n = {};
  double tokens = 0, seqs = 0, sum_s2 = 0;  // 0: not given
  uint32_t flags = 0;                       // StepFlag bits
  bool gpu_clock = false;  // times from CUDA events, else host clocks

  int64_t CollNs() const {
    int64_t sum = 0;
    for (int64_t v : coll_ns) sum += v;
    return sum;
  }
};

struct DropRecord {
  int64_t first_seq = 0, last_seq = 0;  // inclusive
};

// One line of the body: its stream key and where its payload is.
struct RecordHeader {
  RecordKind kind = RecordKind::kStep;
  int32_t job = 0;  // index into AgentBatch::jobs
  int32_t rank = 0;
  int64_t epoch = 0;
  int64_t seq = 0;
  int32_t line = 0;   // 1-based line in the body
  int32_t index = 0;  // into ranks, steps or drops by kind
};

// The records of one request body, in line order.
struct AgentBatch {
  std::vector<std::string> jobs;  // distinct job names, first-seen order
  std::vector<RecordHeader> records;
  std::vector<RankInfo> ranks;
  std::vector<StepRecord> steps;
  std::vector<DropRecord> drops;
};

}  // namespace strag::ingest::agent

#endif  // STRAG_SRC_INGEST_AGENT_AGENT_RECORDS_H_
