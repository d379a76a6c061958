// SPDX-License-Identifier: Apache-2.0
// ParseAgentNdjson: one request body of the live protocol (NDJSON, one
// record per line; docs/formats/agent-protocol.md) into an AgentBatch.
//
// All or nothing: the first bad line fails the whole body with
// kInvalidInput "line N: ..." (the collector answers 400 and stores none of
// it). Unknown keys are ignored (newer agents); blank lines are skipped.
// Cost: one simdjson DOM parse per line, reusing the parser.

#ifndef STRAG_SRC_INGEST_AGENT_AGENT_PARSER_H_
#define STRAG_SRC_INGEST_AGENT_AGENT_PARSER_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "ingest/agent/agent_records.h"

namespace strag::ingest::agent {

struct AgentLimits {
  int64_t max_records = 10'000;
  int64_t max_line_bytes = 64 * 1024;
  int32_t max_rank = (1 << 24) - 1;
};

// Reuses its JSON parser across calls; one per thread.
class AgentParser {
 public:
  explicit AgentParser(AgentLimits limits = {});
  ~AgentParser();
  AgentParser(const AgentParser&) = delete;
  AgentParser& operator=(const AgentParser&) = delete;

  Result<AgentBatch> Parse(std::string_view body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True for a valid job name: 1-128 bytes of [A-Za-z0-9._:-].
bool ValidJobName(std::string_view name);

}  // namespace strag::ingest::agent

#endif  // STRAG_SRC_INGEST_AGENT_AGENT_PARSER_H_
