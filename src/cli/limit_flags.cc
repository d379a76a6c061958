// SPDX-License-Identifier: Apache-2.0
#include "cli/limit_flags.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strag::cli {

const char kLimitFlagsUsage[] =
    "  --max-line-bytes N    longest ops CSV line read (default 64M; K, M, G\n"
    "                        suffixes); a longer one is refused\n"
    "  --max-token-bytes N   longest top-level JSON string or number of a\n"
    "                        Kineto trace (default 64M)\n"
    "  --max-event-bytes N   longest Kineto event or top-level value\n"
    "                        (default 64M)\n";

namespace {

constexpr uint64_t kMinLimitBytes = uint64_t{1} << 10;

}  // namespace

std::optional<uint64_t> ParseBytes(std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr == text.data()) return std::nullopt;
  std::string_view unit(ptr, static_cast<size_t>(end - ptr));
  if (unit.ends_with("iB")) unit.remove_suffix(2);
  int shift = 0;
  if (unit == "K" || unit == "k") {
    shift = 10;
  } else if (unit == "M" || unit == "m") {
    shift = 20;
  } else if (unit == "G" || unit == "g") {
    shift = 30;
  } else if (!unit.empty()) {
    return std::nullopt;
  }
  if (value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

namespace {

Status ParseLimit(const Flags& flags, const char* name, uint64_t* limit) {
  const std::optional<std::string> text = flags.Get(name);
  if (!text) return Status::Ok();
  const std::optional<uint64_t> bytes = ParseBytes(*text);
  if (!bytes || *bytes < kMinLimitBytes ||
      *bytes > ingest::kMaxInputLimitBytes) {
    return InvalidInput(
        std::string("flag --") + name +
        ": expected a size from 1K to 2G (bytes, or with K, M, G), got \"" +
        *text + "\"");
  }
  *limit = *bytes;
  return Status::Ok();
}

}  // namespace

void AddLimitFlags(FlagSpec* spec) {
  for (const char* f :
       {"max-line-bytes", "max-token-bytes", "max-event-bytes"}) {
    spec->with_value.insert(f);
  }
}

Result<ingest::InputLimits> ParseLimitFlags(const Flags& flags) {
  ingest::InputLimits limits;
  RETURN_IF_ERROR(ParseLimit(flags, "max-line-bytes", &limits.max_line_bytes));
  RETURN_IF_ERROR(
      ParseLimit(flags, "max-token-bytes", &limits.max_token_bytes));
  RETURN_IF_ERROR(
      ParseLimit(flags, "max-event-bytes", &limits.max_event_bytes));
  return limits;
}

}  // namespace strag::cli
