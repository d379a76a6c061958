// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/meta_yaml.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace strag::ingest {
namespace {

std::string_view TrimLeft(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t");
  return begin == std::string_view::npos ? std::string_view() : s.substr(begin);
}

std::string_view TrimRight(std::string_view s) {
  const size_t end = s.find_last_not_of(" \t\r");
  return end == std::string_view::npos ? std::string_view()
                                       : s.substr(0, end + 1);
}

// Cuts a `#` comment off a plain (unquoted) scalar: YAML starts a comment at
// a `#` that follows whitespace, so `a#b` stays whole.
std::string_view StripComment(std::string_view s) {
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '#' && (s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

class MetaYamlParser {
 public:
  explicit MetaYamlParser(std::string_view source) : source_(source) {}

  Status ParseLine(std::string_view line);
  trace::JobMeta TakeMeta() && { return std::move(meta_); }

 private:
  Status Error(const std::string& what) const {
    return InvalidInput(std::string(source_) + ": line " +
                        std::to_string(line_no_) + ": " + what);
  }
  Status KeyError(const std::string& key, const std::string& what) const {
    return Error("key '" + key + "': " + what);
  }
  Result<std::string> ParseValue(const std::string& key,
                                 std::string_view text) const;
  Result<std::string> ParseQuoted(const std::string& key,
                                  std::string_view text) const;
  Status Apply(const std::string& key, const std::string& value);
  template <typename T>
  Status ParseSize(const std::string& key, const std::string& value, T* out);

  std::string_view source_;
  size_t line_no_ = 0;
  std::vector<size_t> key_lines_;  // line of each entry of meta_.raw
  size_t cp_line_ = 0;             // line of dsp_size / cp_size, 0 if none
  trace::JobMeta meta_;
};

Status MetaYamlParser::ParseLine(std::string_view line) {
  ++line_no_;
  const std::string_view content = TrimRight(line);
  if (TrimLeft(content).empty() || TrimLeft(content).starts_with('#')) {
    return Status::Ok();
  }
  if (content == "---" || content == "...") return Status::Ok();
  if (content.front() == ' ' || content.front() == '\t') {
    return Error(
        "indented line: nested YAML is not supported (only flat 'key: value' "
        "lines)");
  }
  if (content.starts_with("- ") || content == "-") {
    return Error("lists are not supported (only flat 'key: value' lines)");
  }
  // The key ends at the first ':' followed by a space or the end of line.
  size_t colon = content.find(':');
  while (colon != std::string_view::npos && colon + 1 < content.size() &&
         content[colon + 1] != ' ' && content[colon + 1] != '\t') {
    colon = content.find(':', colon + 1);
  }
  if (colon == std::string_view::npos) {
    return Error("expected 'key: value', found \"" + std::string(content) +
                 "\"");
  }
  const std::string key(TrimRight(content.substr(0, colon)));
  if (key.empty()) return Error("empty key");
  for (size_t i = 0; i < meta_.raw.size(); ++i) {
    if (meta_.raw[i].first == key) {
      return Error("duplicate key '" + key + "' (first on line " +
                   std::to_string(key_lines_[i]) + ")");
    }
  }
  ASSIGN_OR_RETURN(std::string value,
                   ParseValue(key, TrimLeft(content.substr(colon + 1))));
  RETURN_IF_ERROR(Apply(key, value));
  meta_.raw.emplace_back(key, std::move(value));
  key_lines_.push_back(line_no_);
  return Status::Ok();
}

Result<std::string> MetaYamlParser::ParseValue(const std::string& key,
                                               std::string_view text) const {
  if (text.starts_with('"') || text.starts_with('\'')) {
    return ParseQuoted(key, text);
  }
  if (text.starts_with('|') || text.starts_with('>')) {
    return KeyError(key, "multi-line values are not supported");
  }
  if (text.starts_with('&') || text.starts_with('*') || text.starts_with('!')) {
    return KeyError(key, "anchors, aliases and tags are not supported");
  }
  return std::string(TrimRight(StripComment(text)));
}

// Double quotes take backslash escapes (\" \\ \n \t); single quotes take ''
// for one quote. Only a comment may follow the closing quote.
Result<std::string> MetaYamlParser::ParseQuoted(const std::string& key,
                                                std::string_view text) const {
  const char quote = text.front();
  std::string value;
  size_t i = 1;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        value.push_back('\'');
        ++i;
        continue;
      }
      break;
    }
    if (quote == '"' && c == '\\' && i + 1 < text.size()) {
      const char escaped = text[++i];
      value.push_back(escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped);
      continue;
    }
    value.push_back(c);
  }
  if (i >= text.size()) {
    return KeyError(key, "quoted value has no closing quote");
  }
  const std::string_view rest = TrimLeft(text.substr(i + 1));
  if (!rest.empty() && !rest.starts_with('#')) {
    return KeyError(key, "unexpected text after the closing quote");
  }
  return value;
}

template <typename T>
Status MetaYamlParser::ParseSize(const std::string& key,
                                 const std::string& value, T* out) {
  // A degree past 2^24, or a world past 2^31 - 1, is no job strag can name
  // ranks in (and the products of degrees must not overflow).
  const int64_t max =
      key == "world_size" ? (int64_t{1} << 31) - 1 : int64_t{1} << 24;
  int64_t parsed = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    return KeyError(
        key, value + " is out of range (at most " + std::to_string(max) + ")");
  }
  if (ec != std::errc() || ptr != end || value.empty()) {
    return KeyError(key, "\"" + value + "\" is not an integer");
  }
  if (parsed < 1) return KeyError(key, value + " must be at least 1");
  if (parsed > max) {
    return KeyError(
        key, value + " is out of range (at most " + std::to_string(max) + ")");
  }
  *out = static_cast<T>(parsed);
  return Status::Ok();
}

Status MetaYamlParser::Apply(const std::string& key, const std::string& value) {
  if (key == "dp_size") return ParseSize(key, value, &meta_.dp);
  if (key == "pp_size") return ParseSize(key, value, &meta_.pp);
  if (key == "tp_size") return ParseSize(key, value, &meta_.tp);
  if (key == "vpp_size") return ParseSize(key, value, &meta_.vpp);
  if (key == "world_size") return ParseSize(key, value, &meta_.world_size);
  if (key == "trial_name") {
    meta_.trial_name = value;
    return Status::Ok();
  }
  if (key != "dsp_size" && key != "cp_size") return Status::Ok();
  // dsp_size (the published name) and cp_size are synonyms; both may be
  // given only if they agree.
  const int32_t previous = meta_.cp;
  RETURN_IF_ERROR(ParseSize(key, value, &meta_.cp));
  if (cp_line_ != 0 && previous != meta_.cp) {
    return KeyError(key, value + " disagrees with the context-parallel size " +
                             std::to_string(previous) + " on line " +
                             std::to_string(cp_line_));
  }
  cp_line_ = line_no_;
  return Status::Ok();
}

}  // namespace

Result<trace::JobMeta> ParseJobMetaYaml(std::string_view text,
                                        std::string_view source_name) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  MetaYamlParser parser(source_name);
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    RETURN_IF_ERROR(parser.ParseLine(line));
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return std::move(parser).TakeMeta();
}

std::string WriteJobMetaYaml(const trace::JobMeta& meta,
                             std::string_view writer) {
  std::string out = "# written by " + std::string(writer) + "\n";
  for (const auto& [key, value] : meta.raw) out += key + ": " + value + "\n";
  return out;
}

}  // namespace strag::ingest
