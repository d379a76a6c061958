// SPDX-License-Identifier: Apache-2.0
// The writer beside ParseAgentNdjson: records as NDJSON lines of the live
// protocol (docs/formats/agent-protocol.md), for the load generator
// (`strag simulate --live`) and tests. What it writes the parser reads back
// unchanged.

#ifndef STRAG_SRC_INGEST_AGENT_AGENT_WRITER_H_
#define STRAG_SRC_INGEST_AGENT_AGENT_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ingest/agent/agent_records.h"

namespace strag::ingest::agent {

struct StreamId {
  std::string_view job;
  int32_t rank = 0;
  int64_t epoch = 0;
};

void AppendRankLine(const StreamId& id, int64_t seq, const RankInfo& r,
                    std::string* out);
void AppendStepLine(const StreamId& id, int64_t seq, const StepRecord& s,
                    std::string* out);
// A drop record stands for seqs first_seq..last_seq and carries seq
// last_seq.
void AppendDropLine(const StreamId& id, const DropRecord& d, std::string* out);

}  // namespace strag::ingest::agent

#endif  // STRAG_SRC_INGEST_AGENT_AGENT_WRITER_H_
