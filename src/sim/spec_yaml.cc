// SPDX-License-Identifier: Apache-2.0
// yaml-cpp's event parser builds the YamlNode tree directly (no YAML::Node
// graph in between): every event carries a mark, so every node keeps its
// line, and aliases are expanded here under a budget. yaml-cpp throws; all
// of it is caught in ParseYaml and turned into one "SOURCE: line L, column
// C: what" (its marks are 0-based, ours 1-based).

#include "sim/spec_yaml.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "base/yaml_prescan.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <istream>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strag::sim {
namespace {

// Deep enough for any spec; shallow enough that the tree's recursive
// copies, destructors and the spec reader's messages stay cheap. yaml-cpp
// itself stops at 2000 levels (DepthGuard); the builder stops first.
constexpr size_t kMaxDepth = 64;
// What the tree may hold, aliases counted at every use: a bound on the
// "billion laughs" (anchors of aliases of anchors...). A spec with 10,000
// stragglers holds about 70,000 nodes.
constexpr int64_t kMaxNodes = int64_t{1} << 20;
constexpr int64_t kMaxTextBytes = int64_t{64} << 20;
// Past this many entries a map checks duplicate keys with a hash index.
constexpr size_t kIndexFrom = 16;
constexpr std::string_view kCoreTag = "tag:yaml.org,2002:";

// Thrown by the builder to stop yaml-cpp's parser; caught in ParseYaml and
// never past it.
struct Stop {
  Status status;
};

// The text and its name, for messages at yaml-cpp's marks.
class Source {
 public:
  Source(std::string_view text, std::string_view name)
      : text_(text), name_(name) {}

  std::string_view name() const { return name_; }

  Status ErrorAt(int64_t line, int64_t column, const std::string& what) const {
    return InvalidInput(std::string(name_) + ": line " + std::to_string(line) +
                        ", column " + std::to_string(column) + ": " + what);
  }
  // At a 0-based yaml-cpp mark; a null mark is the end of the input.
  Status Error(const YAML::Mark& mark, const std::string& what) const {
    if (!mark.is_null()) return ErrorAt(mark.line + 1, mark.column + 1, what);
    const size_t last = text_.rfind('\n');
    const auto lines = std::count(text_.begin(), text_.end(), '\n');
    const size_t column =
        last == std::string_view::npos ? text_.size() : text_.size() - last - 1;
    return ErrorAt(lines + 1, static_cast<int64_t>(column) + 1, what);
  }
  // The text from the mark on (empty for a null mark or past the end).
  std::string_view From(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= text_.size()) {
      return {};
    }
    return text_.substr(static_cast<size_t>(mark.pos));
  }
  // The rest of the mark's line, for "found ...", at most 40 bytes.
  std::string LineFrom(const YAML::Mark& mark) const {
    std::string_view rest = From(mark);
    rest = rest.substr(0, rest.find_first_of("\r\n"));
    rest = rest.substr(0, rest.find_last_not_of(' ') + 1);
    if (rest.size() <= 40) return std::string(rest);
    return std::string(rest.substr(0, 40)) + "...";
  }
  // Nothing but spaces, line breaks and comments after the mark.
  bool AtEnd(const YAML::Mark& mark) const {
    std::string_view rest = From(mark);
    while (!rest.empty()) {
      const size_t i = rest.find_first_not_of(" \t\r\n");
      if (i == std::string_view::npos) return true;
      if (rest[i] != '#') return false;
      const size_t eol = rest.find('\n', i);
      if (eol == std::string_view::npos) return true;
      rest.remove_prefix(eol);
    }
    return true;
  }
  // A plain null (`~`, `null`, `Null`, `NULL`) at the mark, or "": yaml-cpp
  // reports those and an empty value alike, the tree keeps the text.
  std::string NullLiteralAt(const YAML::Mark& mark) const {
    const std::string_view rest = From(mark);
    for (const std::string_view word : {"~", "null", "Null", "NULL"}) {
      if (rest.starts_with(word) &&
          (rest.size() == word.size() ||
           std::string_view(" \t\r\n,]}#").find(rest[word.size()]) !=
               std::string_view::npos)) {
        return std::string(word);
      }
    }
    return "";
  }
  // The 1-based line of the last content (not blank, not a comment) before
  // the mark: where an empty node is. yaml-cpp marks an empty list item
  // (`-` alone) at the next token, lines further down.
  int32_t ContentLineBefore(const YAML::Mark& mark) const {
    size_t end = std::min(text_.size(), static_cast<size_t>(mark.pos));
    int32_t line = mark.line + 1;
    while (true) {
      const size_t newline =
          end == 0 ? std::string_view::npos : text_.rfind('\n', end - 1);
      const size_t start = newline == std::string_view::npos ? 0 : newline + 1;
      std::string_view content = text_.substr(start, end - start);
      for (size_t i = 0; i < content.size(); ++i) {
        if (content[i] == '#' &&
            (i == 0 || content[i - 1] == ' ' || content[i - 1] == '\t')) {
          content = content.substr(0, i);
          break;
        }
      }
      if (content.find_first_not_of(" \t\r") != std::string_view::npos ||
          start == 0 || line <= 1) {
        return line;
      }
      end = start - 1;
      --line;
    }
  }
  // Whether the mark's line holds a ':' that ends a key: yaml-cpp 0.7 reads
  // a line of a block map without one (`plain`) as a key without a value.
  bool KeyColonOnLine(const YAML::Mark& mark) const {
    std::string_view rest = From(mark);
    rest = rest.substr(0, rest.find('\n'));
    for (size_t i = rest.find(':'); i != std::string_view::npos;
         i = rest.find(':', i + 1)) {
      if (i + 1 == rest.size() || rest[i + 1] == ' ' || rest[i + 1] == '\t' ||
          rest[i + 1] == '\r') {
        return true;
      }
    }
    return false;
  }
  // The name after an alias's '*' at the mark.
  std::string AliasName(const YAML::Mark& mark) const {
    std::string_view rest = From(mark);
    if (rest.starts_with('*')) rest.remove_prefix(1);
    return std::string(rest.substr(0, rest.find_first_of(" \t\r\n,[]{}")));
  }
  // yaml-cpp 0.7 takes a quoted scalar that runs into the end of the input
  // as closed there; such a quote is refused.
  Status CheckQuoteClosed(const YAML::Mark& mark) const {
    const std::string_view rest = From(mark);
    if (rest.empty() || (rest[0] != '\'' && rest[0] != '"')) {
      return Status::Ok();
    }
    const char quote = rest[0];
    for (size_t i = 1; i < rest.size(); ++i) {
      if (quote == '"' && rest[i] == '\\') {
        ++i;
      } else if (rest[i] == quote) {
        if (quote == '\'' && i + 1 < rest.size() && rest[i + 1] == '\'') {
          ++i;
          continue;
        }
        return Status::Ok();
      }
    }
    return Error(mark, std::string("unclosed quote (no closing ") + quote +
                           " before the end of the input)");
  }

 private:
  std::string_view text_;
  std::string_view name_;
};

struct Size {
  int64_t nodes = 0;
  int64_t bytes = 0;   // scalar text and keys
  size_t height = 0;   // collections on the longest path down
};

// Receives yaml-cpp's events and builds the tree; throws Stop at the first
// error of its own (duplicate key, depth, budget, alias, tag).
class TreeBuilder final : public YAML::EventHandler {
 public:
  explicit TreeBuilder(const Source& source) : src_(source) {}

  // The root; an empty document is an empty map.
  YamlNode TakeRoot() && {
    if (has_root_ && !root_empty_) return std::move(root_);
    YamlNode empty;
    empty.kind = YamlNode::Kind::kMap;
    empty.line = 1;
    return empty;
  }
  // The innermost open flow collection, or nullptr: an unclosed bracket
  // is reported where it opens.
  const YAML::Mark* OpenFlow(char* bracket) const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (!it->flow) continue;
      *bracket = it->node.kind == YamlNode::Kind::kMap ? '{' : '[';
      return &it->mark;
    }
    return nullptr;
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 1) return;
    Fail(mark, src_.From(mark).starts_with("---")
                   ? "a second document ('---') is not supported"
                   : "content after the end of the document (check the "
                     "indentation)");
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YamlNode node;
    node.text = src_.NullLiteralAt(mark);
    node.line = node.text.empty() && !mark.is_null()
                    ? src_.ContentLineBefore(mark)
                    : mark.line + 1;
    const Size size{1, static_cast<int64_t>(node.text.size()), 0};
    Charge(mark, size);
    const bool empty = node.text.empty();
    Add(std::move(node), size, anchor, mark, empty);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor >= anchors_.size() || !anchors_[anchor].done) {
      Fail(mark, "alias '*" + src_.AliasName(mark) +
                     "' refers to the node that contains it");
    }
    const Anchored& target = anchors_[anchor];
    if (stack_.size() + target.size.height > kMaxDepth) Deep(mark);
    Charge(mark, target.size);
    YamlNode copy = target.node;
    copy.line = mark.line + 1;
    Add(std::move(copy), target.size, YAML::NullAnchor, mark, target.empty);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag,
                YAML::anchor_t anchor, const std::string& value) override {
    CheckTag(mark, tag);
    if (tag == "!") Check(src_.CheckQuoteClosed(mark));
    YamlNode node;
    node.line = mark.line + 1;
    node.text = value;
    // Quoted and block scalars (tag "!") and !!str are strings.
    node.quoted = tag == "!" || (tag.starts_with(kCoreTag) &&
                                 tag.substr(kCoreTag.size()) == "str");
    const Size size{1, static_cast<int64_t>(value.size()), 0};
    Charge(mark, size);
    Add(std::move(node), size, anchor, mark, false);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag,
                       YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    Open(mark, tag, anchor, YamlNode::Kind::kList, style);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag,
                  YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    Open(mark, tag, anchor, YamlNode::Kind::kMap, style);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    YamlNode node;
    Size size;
    YAML::Mark mark;
    YAML::anchor_t anchor = YAML::NullAnchor;
    bool flow = false;
    // A map between a key and its value: the key.
    bool has_key = false;
    std::string key;
    int32_t key_line = 0;
    YAML::Mark key_mark;
    std::unordered_map<std::string, int32_t> key_lines;  // past kIndexFrom
  };
  struct Anchored {
    YamlNode node;
    Size size;
    bool empty = false;
    bool done = false;  // false while the anchored collection is open
  };

  [[noreturn]] void Fail(const YAML::Mark& mark, const std::string& what) const {
    throw Stop{src_.Error(mark, what)};
  }
  void Check(Status status) const {
    if (!status.ok()) throw Stop{std::move(status)};
  }
  [[noreturn]] void Deep(const YAML::Mark& mark) const {
    Fail(mark, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }

  void Charge(const YAML::Mark& mark, const Size& size) {
    total_.nodes += size.nodes;
    total_.bytes += size.bytes;
    if (total_.nodes > kMaxNodes || total_.bytes > kMaxTextBytes) {
      Fail(mark, "the document holds more than " + std::to_string(kMaxNodes) +
                     " nodes or 64 MiB of text (an alias counts its anchor's "
                     "content at every use)");
    }
  }

  // Only YAML's core tags: !!str makes a scalar a string, the others
  // change nothing (the spec reader decides types from the text).
  void CheckTag(const YAML::Mark& mark, const std::string& tag) const {
    if (tag.empty() || tag == "?" || tag == "!") return;
    if (tag.starts_with(kCoreTag)) {
      const std::string_view name = std::string_view(tag).substr(kCoreTag.size());
      for (const std::string_view core :
           {"str", "int", "float", "bool", "null", "map", "seq"}) {
        if (name == core) return;
      }
    }
    std::string shown = tag;
    if (tag.starts_with(kCoreTag)) shown = "!!" + tag.substr(kCoreTag.size());
    Fail(mark, "unsupported tag '" + shown +
                   "' (only YAML's core tags: !!str, !!int, !!float, !!bool, "
                   "!!null, !!map, !!seq)");
  }

  void Open(const YAML::Mark& mark, const std::string& tag,
            YAML::anchor_t anchor, YamlNode::Kind kind,
            YAML::EmitterStyle::value style) {
    CheckTag(mark, tag);
    if (stack_.size() >= kMaxDepth) Deep(mark);
    Charge(mark, {1, 0, 0});
    if (anchor != YAML::NullAnchor && anchor >= anchors_.size()) {
      anchors_.resize(anchor + 1);
    }
    Frame& frame = stack_.emplace_back();
    frame.node.kind = kind;
    frame.node.line = mark.line + 1;
    frame.size = {1, 0, 1};
    frame.mark = mark;
    frame.anchor = anchor;
    frame.flow = style == YAML::EmitterStyle::Flow;
  }

  void Close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Add(std::move(frame.node), frame.size, frame.anchor, frame.mark, false);
  }

  // A finished node: the root, a map's key or value, or a list's item.
  void Add(YamlNode node, const Size& size, YAML::anchor_t anchor,
           const YAML::Mark& mark, bool empty) {
    if (anchor != YAML::NullAnchor) {
      Charge(mark, size);  // the kept copy
      if (anchor >= anchors_.size()) anchors_.resize(anchor + 1);
      anchors_[anchor] = {node, size, empty, true};
    }
    if (stack_.empty()) {
      root_ = std::move(node);
      root_empty_ = empty;
      has_root_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.node.kind == YamlNode::Kind::kMap) {
      if (!top.has_key) {
        AddKey(&top, std::move(node), mark);
        return;
      }
      node.key = std::move(top.key);
      node.key_line = top.key_line;
      top.has_key = false;
      top.size.bytes += static_cast<int64_t>(node.key.size());
      if (empty) {  // `key:` with nothing after
        node.line = node.key_line;
        if (!top.flow && !src_.KeyColonOnLine(top.key_mark)) {
          Fail(top.key_mark, "expected 'key: value', found \"" +
                                 src_.LineFrom(top.key_mark) + "\"");
        }
      }
    }
    top.size.nodes += size.nodes;
    top.size.bytes += size.bytes;
    top.size.height = std::max(top.size.height, size.height + 1);
    top.node.children.push_back(std::move(node));
  }

  void AddKey(Frame* map, YamlNode key, const YAML::Mark& mark) {
    if (key.kind != YamlNode::Kind::kScalar) Fail(mark, "keys must be scalars");
    if (key.text.empty()) Fail(mark, "empty key");
    int32_t first = 0;
    std::vector<YamlNode>& entries = map->node.children;
    if (entries.size() < kIndexFrom) {
      for (const YamlNode& entry : entries) {
        if (entry.key == key.text) first = entry.key_line;
      }
    } else {
      if (map->key_lines.empty()) {
        for (const YamlNode& entry : entries) {
          map->key_lines.emplace(entry.key, entry.key_line);
        }
      }
      const auto [it, added] = map->key_lines.emplace(key.text, key.line);
      if (!added) first = it->second;
    }
    if (first != 0) {
      Fail(mark, "duplicate key '" + key.text + "' (first on line " +
                     std::to_string(first) + ")");
    }
    map->has_key = true;
    map->key = std::move(key.text);
    map->key_line = key.line;
    map->key_mark = mark;
  }

  const Source& src_;
  std::vector<Frame> stack_;
  std::vector<Anchored> anchors_;  // by yaml-cpp's anchor id
  YamlNode root_;
  bool has_root_ = false;
  bool root_empty_ = false;
  int documents_ = 0;
  Size total_;
};

std::string Describe(std::string_view rest) {
  if (rest.empty()) return "the end of the input";
  if (rest[0] == '\n' || rest[0] == '\r') return "the end of the line";
  return std::string("'") + rest[0] + "'";
}

// yaml-cpp's message in the words of this project's other messages.
std::string Explain(const YAML::Exception& e, const Source& src,
                    const TreeBuilder& builder, YAML::Mark* mark) {
  namespace msg = YAML::ErrorMsg;
  const std::string& what = e.msg;
  const std::string_view rest = src.From(*mark);
  if (what == msg::TAB_IN_INDENTATION) return "tab in indentation (use spaces)";
  if (what == msg::END_OF_MAP_FLOW || what == msg::END_OF_SEQ_FLOW) {
    const char close = what == msg::END_OF_MAP_FLOW ? '}' : ']';
    char open = close == '}' ? '{' : '[';
    if (src.AtEnd(*mark)) {
      if (const YAML::Mark* at = builder.OpenFlow(&open)) *mark = *at;
      return std::string("unclosed '") + open + "' (no '" +
             (open == '{' ? '}' : ']') + "' before the end of the input)";
    }
    return std::string("expected ',' or '") + close + "', found " +
           Describe(rest);
  }
  if (what == msg::END_OF_MAP || what == msg::END_OF_SEQ) {
    if (src.AtEnd(*mark)) return "unexpected end of the input";
    const bool map = what == msg::END_OF_MAP;
    if (map && (rest.starts_with("- ") || rest.starts_with("-\n"))) {
      return "expected 'key: value', found a list item (check the "
             "indentation)";
    }
    return std::string("expected the next ") +
           (map ? "'key: value' of the map" : "'- ' item of the list") +
           " at its indentation, found \"" + src.LineFrom(*mark) +
           "\" (check the indentation)";
  }
  if (what == msg::MAP_VALUE) {
    return "unexpected ':' (quote a value that holds ': ', or check the "
           "indentation)";
  }
  if (what == msg::BLOCK_ENTRY) {
    return "a list item ('- ') cannot start here (a block list starts on "
           "the line after its key)";
  }
  if (what == msg::FLOW_END) {
    return "unexpected " + Describe(rest) + " (it closes no open bracket)";
  }
  if (what == msg::UNKNOWN_TOKEN) {
    if (rest.starts_with('@') || rest.starts_with('`')) {
      return Describe(rest) + " is reserved; quote it";
    }
    return "unexpected " + Describe(rest);
  }
  if (what.starts_with(msg::INVALID_ESCAPE)) {
    return "unsupported escape '\\" +
           what.substr(std::string_view(msg::INVALID_ESCAPE).size()) +
           "' in a double-quoted scalar";
  }
  if (what == msg::UNKNOWN_ANCHOR) {
    return "alias '*" + src.AliasName(*mark) +
           "' names no anchor defined before it";
  }
  if (what == msg::EOF_IN_SCALAR) {
    return "unclosed quote (no closing quote before the end of the input)";
  }
  if (dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr) {
    return "nesting deeper than " + std::to_string(kMaxDepth) + " levels";
  }
  return what;
}

}  // namespace

const YamlNode* YamlNode::Find(std::string_view key_name) const {
  if (kind != Kind::kMap) return nullptr;
  for (const YamlNode& child : children) {
    if (child.key == key_name) return &child;
  }
  return nullptr;
}

std::string_view YamlNode::KindName() const {
  if (kind == Kind::kMap) return "a map";
  if (kind == Kind::kList) return "a list";
  return IsNull() ? "nothing" : "a scalar";
}

Result<YamlNode> ParseYaml(std::string_view text, std::string_view source) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  const Source src(text, source);
  std::optional<TextProblem> problem = FindBadYamlByte(text);
  if (!problem) problem = FindDeepFlow(text, kMaxDepth);
  if (problem) return src.ErrorAt(problem->line, problem->column, problem->what);
  TreeBuilder builder(src);
  try {
    ViewStreamBuf buffer(text);
    std::istream in(&buffer);
    YAML::Parser parser(in);
    // The builder refuses a second document as it starts.
    while (parser.HandleNextDocument(builder)) {
    }
    return std::move(builder).TakeRoot();
  } catch (const Stop& stop) {
    return stop.status;
  } catch (const YAML::Exception& e) {
    YAML::Mark mark = e.mark;
    const std::string what = Explain(e, src, builder, &mark);
    return src.Error(mark, what);
  } catch (const std::bad_alloc&) {
    return InvalidInput(std::string(source) +
                        ": out of memory while reading the YAML");
  } catch (const std::exception& e) {
    return InvalidInput(std::string(source) + ": " + e.what());
  }
}

}  // namespace strag::sim
