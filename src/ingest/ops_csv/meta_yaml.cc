// SPDX-License-Identifier: Apache-2.0
// yaml-cpp's event parser reads the file; the events of a flat map (key,
// scalar, key, scalar, ...) go to MetaYamlParser, anything nested is
// refused. yaml-cpp throws; all of it is caught in ParseJobMetaYaml.
#include "ingest/ops_csv/meta_yaml.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "base/yaml_prescan.h"

#include <charconv>
#include <cstdint>
#include <exception>
#include <istream>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strag::ingest {
namespace {

// What the values may hold, aliases counted at every use.
constexpr size_t kMaxValueBytes = size_t{64} << 20;
// Flow nesting measured before yaml-cpp reads the text (FindDeepFlow).
constexpr size_t kMaxDepth = 64;

// Thrown to stop yaml-cpp's parser; caught in ParseJobMetaYaml.
struct Stop {
  Status status;
};

class MetaYamlParser final : public YAML::EventHandler {
 public:
  MetaYamlParser(std::string_view text, std::string_view source)
      : text_(text), source_(source) {}

  trace::JobMeta TakeMeta() && { return std::move(meta_); }

  // Syntax: "SOURCE: line L, column C: what" (0-based yaml-cpp marks).
  Status SyntaxError(int64_t line, int64_t column,
                     const std::string& what) const {
    return InvalidInput(std::string(source_) + ": line " +
                        std::to_string(line) + ", column " +
                        std::to_string(column) + ": " + what);
  }
  Status SyntaxError(const YAML::Mark& mark, const std::string& what) const {
    if (mark.is_null()) return InvalidInput(std::string(source_) + ": " + what);
    return SyntaxError(mark.line + 1, mark.column + 1, what);
  }
  std::string_view From(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= text_.size()) {
      return {};
    }
    return text_.substr(static_cast<size_t>(mark.pos));
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      Fail(mark, "content after the end of the document (only one flat "
                 "'key: value' document)");
    }
  }
  void OnDocumentEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/,
                  YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value style) override {
    if (!in_map_ && !has_key_) {
      in_map_ = true;
      flow_ = style == YAML::EmitterStyle::Flow;
      return;
    }
    Nested(mark, "nested YAML is not supported");
  }
  void OnMapEnd() override { in_map_ = false; }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/,
                       YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    Nested(mark, "lists are not supported");
  }
  void OnSequenceEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // `key:` is "", a written null (`~`, `null`) keeps its text.
    std::string text;
    const std::string_view rest = From(mark);
    for (const std::string_view word : {"~", "null", "Null", "NULL"}) {
      if (rest.starts_with(word) &&
          (rest.size() == word.size() ||
           std::string_view(" \t\r\n,}#").find(rest[word.size()]) !=
               std::string_view::npos)) {
        text = std::string(word);
      }
    }
    // yaml-cpp 0.7 reads a line without ':' in a block map as a key without
    // a value.
    if (text.empty() && in_map_ && has_key_ && !flow_ &&
        !ColonOnLine(key_mark_)) {
      Fail(key_mark_, "expected 'key: value', found \"" + Line(key_mark_) +
                          "\"");
    }
    Scalar(mark, anchor, std::move(text));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      Fail(mark, "an alias of a map (only flat 'key: value' lines)");
    }
    Scalar(mark, YAML::NullAnchor, it->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag,
                YAML::anchor_t anchor, const std::string& value) override {
    if (tag == "!") CheckQuoteClosed(mark);
    Scalar(mark, anchor, value);
  }

 private:
  [[noreturn]] void Fail(const YAML::Mark& mark, const std::string& what) const {
    throw Stop{SyntaxError(mark, what)};
  }
  [[noreturn]] void KeyFail(const YAML::Mark& mark,
                            const std::string& what) const {
    Fail(mark, "key '" + key_ + "': " + what);
  }
  [[noreturn]] void Nested(const YAML::Mark& mark, const std::string& what) {
    const std::string flat = " (only flat 'key: value' lines)";
    if (!in_map_) Fail(mark, what + flat);
    if (!has_key_) Fail(mark, "keys must be scalars");
    KeyFail(mark, what + flat);
  }
  // yaml-cpp 0.7 takes a quote that runs into the end of the input as
  // closed there.
  void CheckQuoteClosed(const YAML::Mark& mark) const {
    const std::string_view rest = From(mark);
    if (rest.empty() || (rest[0] != '\'' && rest[0] != '"')) return;
    for (size_t i = 1; i < rest.size(); ++i) {
      if (rest[0] == '"' && rest[i] == '\\') {
        ++i;
      } else if (rest[i] == rest[0]) {
        if (rest[0] == '\'' && i + 1 < rest.size() && rest[i + 1] == '\'') {
          ++i;
          continue;
        }
        return;
      }
    }
    if (has_key_) KeyFail(mark, "quoted value has no closing quote");
    Fail(mark, "quoted key has no closing quote");
  }

  std::string Line(const YAML::Mark& mark) const {
    const std::string_view rest = From(mark);
    return std::string(rest.substr(0, rest.find_first_of("\r\n")));
  }
  bool ColonOnLine(const YAML::Mark& mark) const {
    const std::string line = Line(mark);
    for (size_t i = line.find(':'); i != std::string::npos;
         i = line.find(':', i + 1)) {
      if (i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\t') {
        return true;
      }
    }
    return false;
  }

  void Scalar(const YAML::Mark& mark, YAML::anchor_t anchor,
              std::string text) {
    value_bytes_ += text.size();
    if (value_bytes_ > kMaxValueBytes) {
      Fail(mark, "the values hold more than 64 MiB (an alias counts its "
                 "anchor's value at every use)");
    }
    if (anchor != YAML::NullAnchor) {
      value_bytes_ += text.size();
      anchors_[anchor] = text;
    }
    if (!in_map_) {
      if (text.empty()) return;  // an empty document
      Fail(mark, "expected 'key: value', found \"" + Line(mark) + "\"");
    }
    if (!has_key_) {
      Key(mark, std::move(text));
      return;
    }
    has_key_ = false;
    if (text.find_first_of("\r\n") != std::string::npos) {
      KeyFail(mark, "multi-line values are not supported");
    }
    line_no_ = key_line_;
    const Status status = Apply(key_, text);
    if (!status.ok()) throw Stop{status};
    meta_.raw.emplace_back(std::move(key_), std::move(text));
    key_lines_.push_back(key_line_);
  }

  void Key(const YAML::Mark& mark, std::string key) {
    if (key.empty()) Fail(mark, "empty key");
    if (key.find_first_of("\r\n") != std::string::npos) {
      Fail(mark, "multi-line keys are not supported");
    }
    const auto [it, added] =
        first_line_.emplace(key, static_cast<size_t>(mark.line) + 1);
    if (!added) {
      Fail(mark, "duplicate key '" + key + "' (first on line " +
                     std::to_string(it->second) + ")");
    }
    has_key_ = true;
    key_ = std::move(key);
    key_line_ = static_cast<size_t>(mark.line) + 1;
    key_mark_ = mark;
  }

  // Semantic errors name the line only, as the spec reader's do.
  Status Error(const std::string& what) const {
    return InvalidInput(std::string(source_) + ": line " +
                        std::to_string(line_no_) + ": " + what);
  }
  Status KeyError(const std::string& key, const std::string& what) const {
    return Error("key '" + key + "': " + what);
  }
  Status Apply(const std::string& key, const std::string& value);
  template <typename T>
  Status ParseSize(const std::string& key, const std::string& value, T* out);

  std::string_view text_;
  std::string_view source_;
  int documents_ = 0;
  bool in_map_ = false;
  bool has_key_ = false;
  std::string key_;
  size_t key_line_ = 0;
  YAML::Mark key_mark_;
  bool flow_ = false;  // the map is `{...}`
  std::unordered_map<std::string, size_t> first_line_;
  std::unordered_map<YAML::anchor_t, std::string> anchors_;
  size_t value_bytes_ = 0;
  size_t line_no_ = 0;             // of the entry being applied
  std::vector<size_t> key_lines_;  // line of each entry of meta_.raw
  size_t cp_line_ = 0;             // line of dsp_size / cp_size, 0 if none
  trace::JobMeta meta_;
};

// yaml-cpp's most common messages in this project's words.
std::string Explain(const YAML::Exception& e) {
  namespace msg = YAML::ErrorMsg;
  if (e.msg == msg::TAB_IN_INDENTATION) return "tab in indentation (use spaces)";
  if (e.msg == msg::END_OF_MAP || e.msg == msg::MAP_VALUE) {
    return "expected one 'key: value' per line, without indentation (quote "
           "a value that holds ': ')";
  }
  if (e.msg == msg::BLOCK_ENTRY) {
    return "lists are not supported (only flat 'key: value' lines)";
  }
  if (e.msg.starts_with(msg::INVALID_ESCAPE)) {
    return "unsupported escape '\\" +
           e.msg.substr(std::string_view(msg::INVALID_ESCAPE).size()) +
           "' in a double-quoted value";
  }
  if (e.msg == msg::UNKNOWN_ANCHOR) return "an alias of no anchor before it";
  return e.msg;
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
  MetaYamlParser parser(text, source_name);
  std::optional<TextProblem> problem = FindBadYamlByte(text);
  if (!problem) problem = FindDeepFlow(text, kMaxDepth);
  if (problem) {
    return parser.SyntaxError(problem->line, problem->column, problem->what);
  }
  try {
    ViewStreamBuf buffer(text);
    std::istream in(&buffer);
    YAML::Parser yaml(in);
    while (yaml.HandleNextDocument(parser)) {
    }
  } catch (const Stop& stop) {
    return stop.status;
  } catch (const YAML::Exception& e) {
    return parser.SyntaxError(e.mark, Explain(e));
  } catch (const std::bad_alloc&) {
    return InvalidInput(std::string(source_name) +
                        ": out of memory while reading the YAML");
  } catch (const std::exception& e) {
    return InvalidInput(std::string(source_name) + ": " + e.what());
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
