// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the live agents' record parser (the body of a
// POST /v1/ingest, which anyone who can reach the collector may send): any
// input must parse or fail cleanly, also under small limits, and whatever
// parses must read back unchanged after the writer (agent_writer.h).
// Build with clang and -fsanitize=fuzzer,address,undefined
// (STRAG_BUILD_FUZZERS=ON);
// agent_fuzz_driver.cc runs it without libFuzzer, in CI.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "ingest/agent/agent_parser.h"
#include "ingest/agent/agent_writer.h"

bool agent_fuzz_last_parsed = false;

namespace {

using strag::ingest::agent::AgentBatch;
using strag::ingest::agent::AgentParser;
using strag::ingest::agent::RecordKind;

bool SameStep(const strag::ingest::agent::StepRecord& a,
              const strag::ingest::agent::StepRecord& b) {
  return a.step == b.step && a.t_end_ns == b.t_end_ns &&
         a.step_ns == b.step_ns && a.data_ns == b.data_ns &&
         a.fwd_ns == b.fwd_ns && a.bwd_ns == b.bwd_ns && a.opt_ns == b.opt_ns &&
         a.gc_ns == b.gc_ns && a.gc_n == b.gc_n && a.gc_gen == b.gc_gen &&
         a.coll_ns == b.coll_ns && a.coll_n == b.coll_n &&
         a.tokens == b.tokens && a.seqs == b.seqs && a.sum_s2 == b.sum_s2 &&
         a.flags == b.flags && a.gpu_clock == b.gpu_clock;
}

void RoundTrip(const AgentBatch& b) {
  std::string text;
  for (const auto& h : b.records) {
    const strag::ingest::agent::StreamId id{b.jobs[static_cast<size_t>(h.job)],
                                            h.rank, h.epoch};
    const auto i = static_cast<size_t>(h.index);
    if (h.kind == RecordKind::kStep) {
      AppendStepLine(id, h.seq, b.steps[i], &text);
    } else if (h.kind == RecordKind::kRank) {
      AppendRankLine(id, h.seq, b.ranks[i], &text);
    } else {
      AppendDropLine(id, b.drops[i], &text);
    }
  }
  AgentParser again;
  auto c = again.Parse(text);
  if (!c.ok() || c->records.size() != b.records.size() || c->jobs != b.jobs) {
    std::abort();
  }
  for (size_t k = 0; k < b.records.size(); ++k) {
    const auto& x = b.records[k];
    const auto& y = c->records[k];
    if (x.kind != y.kind || x.job != y.job || x.rank != y.rank ||
        x.epoch != y.epoch || x.seq != y.seq) {
      std::abort();
    }
    if (x.kind == RecordKind::kStep &&
        !SameStep(b.steps[static_cast<size_t>(x.index)],
                  c->steps[static_cast<size_t>(y.index)])) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  AgentParser parser;
  auto batch = parser.Parse(body);
  agent_fuzz_last_parsed = batch.ok();
  if (batch.ok()) RoundTrip(*batch);
  AgentParser small({.max_records = 3, .max_line_bytes = 256});
  auto limited = small.Parse(body);
  // A body within the small limits parses the same under both.
  if (limited.ok() && (!batch.ok() ||
                       limited->records.size() != batch->records.size())) {
    std::abort();
  }
  return 0;
}
