// SPDX-License-Identifier: Apache-2.0
#include "cli/flags.h"

#include "cli/suggest.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

namespace strag::cli {

Result<Flags> Flags::Parse(const std::vector<std::string>& args,
                           const FlagSpec& spec) {
  Flags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      flags.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (spec.booleans.count(name)) {
      if (inline_value) {
        return InvalidInput("flag --" + name + " does not take a value");
      }
      flags.values_[name].push_back("true");
      continue;
    }
    if (!spec.with_value.count(name)) {
      std::vector<std::string> known(spec.with_value.begin(),
                                     spec.with_value.end());
      known.insert(known.end(), spec.booleans.begin(), spec.booleans.end());
      const std::optional<std::string> near = Closest(name, known);
      return InvalidInput("unknown flag --" + name +
                          (near ? " (did you mean --" + *near + "?)" : ""));
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        return InvalidInput("flag --" + name + " needs a value");
      }
      value = args[++i];
    }
    flags.values_[name].push_back(value);
  }
  return flags;
}

std::optional<std::string> Flags::Get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Flags::GetAll(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

namespace {

// The flag's value as a number of type T (finite for floating point).
template <typename T>
Result<std::optional<T>> ParseNumber(const std::optional<std::string>& text,
                                     const std::string& name,
                                     const char* what) {
  if (!text) return std::optional<T>{};
  T value{};
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  bool ok = ec == std::errc() && ptr == end;
  if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
  if (!ok) {
    return InvalidInput("flag --" + name + ": \"" + *text + "\" is not " +
                        what);
  }
  return std::optional<T>{value};
}

// Digits (after an optional '-') that name an integer too far from zero
// for int64 / uint64, or a negative one for uint64.
bool IsIntegerText(std::string_view text) {
  if (text.starts_with('-')) text.remove_prefix(1);
  return !text.empty() &&
         text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Result<std::optional<int64_t>> Flags::GetInt(const std::string& name) const {
  return GetInt(name, std::numeric_limits<int64_t>::min(),
                std::numeric_limits<int64_t>::max());
}

Result<std::optional<int64_t>> Flags::GetInt(const std::string& name,
                                             int64_t min, int64_t max) const {
  const std::optional<std::string> text = Get(name);
  if (text && IsIntegerText(*text)) {
    int64_t value = 0;
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, value);
    const bool below = ec == std::errc::result_out_of_range
                           ? text->starts_with('-')
                           : value < min;
    const bool above = ec == std::errc::result_out_of_range
                           ? !text->starts_with('-')
                           : value > max;
    if (below) {
      return InvalidInput("flag --" + name + ": " + *text +
                          " must be at least " + std::to_string(min));
    }
    if (above) {
      return InvalidInput("flag --" + name + ": " + *text +
                          " must be at most " + std::to_string(max));
    }
  }
  return ParseNumber<int64_t>(text, name, "an integer");
}

Result<std::optional<uint64_t>> Flags::GetUint64(
    const std::string& name) const {
  const std::optional<std::string> text = Get(name);
  if (text && IsIntegerText(*text)) {
    uint64_t value = 0;
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (text->starts_with('-') || ec != std::errc() || ptr != end) {
      return InvalidInput("flag --" + name + ": " + *text +
                          " is outside 0 .. " +
                          std::to_string(std::numeric_limits<uint64_t>::max()));
    }
  }
  return ParseNumber<uint64_t>(text, name, "an integer");
}

Result<std::optional<double>> Flags::GetDouble(const std::string& name) const {
  return ParseNumber<double>(Get(name), name, "a number");
}

}  // namespace strag::cli
