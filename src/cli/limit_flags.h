// SPDX-License-Identifier: Apache-2.0
// The input limits of `strag analyze` (--max-line-bytes, --max-token-bytes,
// --max-event-bytes): how large one line of an ops CSV, one top-level token
// or one event of a Kineto trace may be (ingest::InputLimits; the defaults
// and what happens past them: docs/formats/ops-csv.md, kineto.md).

#ifndef STRAG_SRC_CLI_LIMIT_FLAGS_H_
#define STRAG_SRC_CLI_LIMIT_FLAGS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/status.h"
#include "cli/flags.h"
#include "ingest/common/input_limits.h"

namespace strag::cli {

// The most a metadata YAML (--meta) may hold.
inline constexpr size_t kMaxMetaFileBytes = size_t{64} << 20;

void AddLimitFlags(FlagSpec* spec);

// "65536", "64K", "64KiB", "256M", "2G" -> 65536, 2^16, 2^16, 2^28, 2^31;
// nullopt when not one.
std::optional<uint64_t> ParseBytes(std::string_view text);

// The usage lines of the limit flags.
extern const char kLimitFlagsUsage[];

// Each flag: a byte count, optionally with K, M or G (KiB, MiB, GiB:
// "256M"), from 1 KiB to 2 GiB; kInvalidInput naming the flag otherwise.
Result<ingest::InputLimits> ParseLimitFlags(const Flags& flags);

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_LIMIT_FLAGS_H_
