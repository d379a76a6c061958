// SPDX-License-Identifier: Apache-2.0
// The top-level keys of a Kineto trace other than traceEvents that the
// reader uses: distributedInfo (rank, world size, backend, process groups),
// baseTimeNanoseconds and displayTimeUnit. Each is a small JSON value,
// parsed on its own with simdjson, before or after the events.

#ifndef STRAG_SRC_INGEST_KINETO_KINETO_METADATA_H_
#define STRAG_SRC_INGEST_KINETO_KINETO_METADATA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "trace/rank_trace.h"

namespace strag::ingest::kineto {

struct KinetoMetadata {
  bool has_rank = false;
  int32_t rank = -1;
  bool has_world_size = false;
  int32_t world_size = 0;
  std::string backend;
  std::vector<trace::ProcessGroupInfo> pg_config;  // in the file's order
  bool has_base_time = false;
  int64_t base_time_ns = 0;       // baseTimeNanoseconds
  std::string display_time_unit;  // display only: never scales ts
};

// The top-level keys ParseTopLevelValue reads.
std::vector<std::string> KinetoMetadataKeys();

// Reads the value `json` of top-level key `key` (starting at byte `offset`
// of `source`) into `*meta`. Invalid JSON is kInvalidInput ("<source>: byte
// N: invalid JSON in distributedInfo: ..."); a field of an unexpected type
// is ignored with a message in `*warnings`.
Status ParseTopLevelValue(std::string_view source, std::string_view key,
                          std::string_view json, uint64_t offset,
                          KinetoMetadata* meta,
                          std::vector<std::string>* warnings);

}  // namespace strag::ingest::kineto

#endif  // STRAG_SRC_INGEST_KINETO_KINETO_METADATA_H_
