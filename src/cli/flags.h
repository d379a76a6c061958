// SPDX-License-Identifier: Apache-2.0
// A small command-line flag parser: `--name value`, `--name=value`, boolean
// `--name`, repeated flags, and positional arguments.

#ifndef STRAG_SRC_CLI_FLAGS_H_
#define STRAG_SRC_CLI_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace strag::cli {

struct FlagSpec {
  std::set<std::string> with_value;  // flags that take a value
  std::set<std::string> booleans;    // flags without a value
};

class Flags {
 public:
  // Fails (kInvalidInput) on an unknown flag or a missing value.
  static Result<Flags> Parse(const std::vector<std::string>& args,
                             const FlagSpec& spec);

  const std::vector<std::string>& positional() const { return positional_; }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> Get(const std::string& name) const;
  std::vector<std::string> GetAll(const std::string& name) const;
  // The flag as an integer; fails naming the flag when it is not one, and
  // naming the broken bound when it lies outside [min, max] ("flag --tp:
  // 16777217 must be at most 16777216"; digits beyond int64 too).
  Result<std::optional<int64_t>> GetInt(const std::string& name) const;
  Result<std::optional<int64_t>> GetInt(const std::string& name, int64_t min,
                                        int64_t max) const;
  // The flag as an integer in 0 .. 2^64 - 1 (a seed); fails naming that
  // range otherwise.
  Result<std::optional<uint64_t>> GetUint64(const std::string& name) const;
  // The flag as a finite number; fails naming the flag when it is not one.
  Result<std::optional<double>> GetDouble(const std::string& name) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace strag::cli

#endif  // STRAG_SRC_CLI_FLAGS_H_
