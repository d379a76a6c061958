// SPDX-License-Identifier: Apache-2.0
#include "sim/spec_yaml.h"

#include <string>
#include <utility>
#include <vector>

namespace strag::sim {
namespace {

// Deep enough for any spec; shallow enough that hostile input such as
// "[[[[..." cannot exhaust the stack.
constexpr int kMaxDepth = 64;

std::string_view TrimRight(std::string_view s) {
  const size_t end = s.find_last_not_of(' ');
  return end == std::string_view::npos ? std::string_view()
                                       : s.substr(0, end + 1);
}

// A line holds content unless it is blank or only a comment.
bool IsContentLine(std::string_view line) {
  const size_t i = line.find_first_not_of(" \t");
  return i != std::string_view::npos && line[i] != '#';
}

// Describes a character for messages ("'x'", "the end of the line").
std::string Describe(char c) {
  if (c == '\n') return "the end of the line";
  if (c == '\0') return "the end of the input";
  return std::string("'") + c + "'";
}

// Recursive descent over the text as lines. Block structure is read line
// by line (the cursor stands on a line's first content character); flow
// collections run character by character and may cross lines.
class YamlParser {
 public:
  explicit YamlParser(std::string_view source) : source_(source) {}

  Result<YamlNode> Parse(std::string_view text);

 private:
  bool AtEof() const { return li_ >= lines_.size(); }
  std::string_view Line() const { return lines_[li_]; }
  // The character `ahead` past the cursor: '\n' past the end of the line,
  // '\0' at the end of the input.
  char Peek(size_t ahead = 0) const {
    if (AtEof()) return '\0';
    return col_ + ahead < Line().size() ? Line()[col_ + ahead] : '\n';
  }
  int32_t LineNo() const { return static_cast<int32_t>(li_ + 1); }
  bool AtListItem() const {
    return Peek() == '-' && (Peek(1) == ' ' || Peek(1) == '\n');
  }
  // End of line, end of input or a comment (a '#' after a space).
  bool AtLineEnd() const {
    const char c = Peek();
    return c == '\n' || c == '\0' ||
           (c == '#' && col_ > 0 && Line()[col_ - 1] == ' ');
  }

  Status ErrorAt(int32_t line, const std::string& what) const {
    return InvalidInput(std::string(source_) + ": line " +
                        std::to_string(line) + ": " + what);
  }
  Status Error(const std::string& what) const {
    return ErrorAt(LineNo(), what);
  }
  Status BadIndent(size_t expected) const {
    return Error("bad indentation: " + std::to_string(col_) +
                 " spaces, expected " + std::to_string(expected) +
                 " (only a 'key:' with nothing after it opens a deeper "
                 "block)");
  }

  Status SplitLines(std::string_view text);
  Status SkipToContent();
  Status NextContentLine() {
    ++li_;
    col_ = 0;
    return SkipToContent();
  }
  Status SkipSpaces();
  Status SkipFlowSpace();
  Status ExpectLineEnd(const std::string& after);
  Status CheckIndicator() const;
  bool IsMapEntry();
  Status AddEntry(YamlNode* map, YamlNode entry) const;

  Result<YamlNode> ParseBlockNode(int depth);
  Result<YamlNode> ParseBlockMap(size_t indent, int depth);
  Result<YamlNode> ParseBlockList(size_t indent, bool at_key_indent, int depth);
  Result<YamlNode> ParseInlineValue(int depth);
  Result<YamlNode> ParseFlowNode(int depth);
  Result<YamlNode> ParseFlowCollection(bool is_map, int depth);
  Result<std::string> ParseQuoted();
  Result<std::string> ParsePlain(bool flow);

  std::string_view source_;
  std::vector<std::string_view> lines_;
  size_t li_ = 0;   // current line (0-based)
  size_t col_ = 0;  // current column (0-based)
};

// Splits into lines (LF or CRLF), rejects control characters, and turns the
// document markers into blank lines: `---` may only precede the content and
// only comments may follow `...`.
Status YamlParser::SplitLines(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  bool seen_content = false;
  bool ended = false;  // after `...`
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t newline = text.find('\n', pos);
    if (newline == std::string_view::npos) newline = text.size();
    std::string_view line = text.substr(pos, newline - pos);
    pos = newline + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    const int32_t line_no = static_cast<int32_t>(lines_.size() + 1);
    for (const char c : line) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) {
        return ErrorAt(line_no,
                       "control character (byte " + std::to_string(u) + ")");
      }
    }
    if (line.starts_with('%')) {
      return ErrorAt(line_no, "directives ('%') are not supported");
    }
    const bool is_start =
        line.starts_with("---") && (line.size() == 3 || line[3] == ' ');
    const bool is_end =
        line.starts_with("...") && (line.size() == 3 || line[3] == ' ');
    if (ended && IsContentLine(line)) {
      return ErrorAt(line_no, "content after the end of the document ('...')");
    }
    if (is_start || is_end) {
      if (IsContentLine(line.substr(3))) {
        return ErrorAt(line_no, "content on a '" +
                                    std::string(line.substr(0, 3)) +
                                    "' line is not supported");
      }
      if (is_start && seen_content) {
        return ErrorAt(line_no, "a second document ('---') is not supported");
      }
      ended = ended || is_end;
      line = std::string_view();
    }
    seen_content = seen_content || IsContentLine(line);
    lines_.push_back(line);
  }
  return Status::Ok();
}

// From the start of line li_ to the first content of a content line.
Status YamlParser::SkipToContent() {
  col_ = 0;
  for (; !AtEof(); ++li_) {
    const std::string_view line = Line();
    if (!IsContentLine(line)) continue;
    const size_t i = line.find_first_not_of(" \t");
    if (line.substr(0, i).find('\t') != std::string_view::npos) {
      return Error("tab in indentation (use spaces)");
    }
    col_ = i;
    return Status::Ok();
  }
  return Status::Ok();
}

Status YamlParser::SkipSpaces() {
  while (Peek() == ' ') ++col_;
  if (Peek() == '\t') return Error("tab character (use spaces)");
  return Status::Ok();
}

// Spaces, line breaks and comments inside a flow collection.
Status YamlParser::SkipFlowSpace() {
  while (!AtEof()) {
    const char c = Peek();
    if (c == ' ') {
      ++col_;
    } else if (c == '\t') {
      return Error("tab character (use spaces)");
    } else if (c == '\n' ||
               (c == '#' && (col_ == 0 || Line()[col_ - 1] == ' '))) {
      ++li_;
      col_ = 0;
    } else {
      break;
    }
  }
  return Status::Ok();
}

Status YamlParser::ExpectLineEnd(const std::string& after) {
  RETURN_IF_ERROR(SkipSpaces());
  if (AtLineEnd()) return Status::Ok();
  return Error("unexpected " + Describe(Peek()) + " after " + after);
}

// Characters that cannot start a scalar of this subset; '?', '-' and ':'
// only when a space or the line end follows (`-1` is a plain scalar).
Status YamlParser::CheckIndicator() const {
  static constexpr std::pair<char, std::string_view> kUnsupported[] = {
      {'&', "anchors"},       {'*', "aliases"},       {'!', "tags"},
      {'|', "block scalars"}, {'>', "block scalars"}, {'%', "directives"}};
  const char c = Peek();
  for (const auto& [indicator, name] : kUnsupported) {
    if (c == indicator) {
      return Error(std::string(name) + " ('" + c + "') are not supported");
    }
  }
  if (c == '@' || c == '`') {
    return Error(Describe(c) + " is reserved; quote it");
  }
  if (c == '#') {
    return Error("unexpected '#' (a comment needs a space before it)");
  }
  if (c == ',' || c == ']' || c == '}') {
    return Error("expected a value, found " + Describe(c));
  }
  if (Peek(1) != ' ' && Peek(1) != '\n') return Status::Ok();
  if (c == '?') return Error("complex keys ('?') are not supported");
  if (c == '-') return Error("a list item ('- ') cannot start here");
  if (c == ':') return Error("unexpected ':' (missing key?)");
  return Status::Ok();
}

// Whether the cursor's line continues with `key:` (a ':' followed by a
// space or the end of the line, before any comment). Moves no cursor.
bool YamlParser::IsMapEntry() {
  const size_t li = li_, col = col_;
  bool entry = false;
  if (Peek() == '"' || Peek() == '\'') {
    entry = ParseQuoted().ok() && SkipSpaces().ok() && Peek() == ':' &&
            (Peek(1) == ' ' || Peek(1) == '\n');
  } else if (Peek() != '{' && Peek() != '[') {
    const std::string_view line = Line();
    for (size_t i = col_; i < line.size() && !entry; ++i) {
      if (line[i] == '#' && i > col_ && line[i - 1] == ' ') break;
      entry = line[i] == ':' && (i + 1 == line.size() || line[i + 1] == ' ');
    }
  }
  li_ = li;
  col_ = col;
  return entry;
}

Status YamlParser::AddEntry(YamlNode* map, YamlNode entry) const {
  if (entry.key.empty()) return ErrorAt(entry.key_line, "empty key");
  for (const YamlNode& other : map->children) {
    if (other.key == entry.key) {
      return ErrorAt(entry.key_line, "duplicate key '" + entry.key +
                                         "' (first on line " +
                                         std::to_string(other.key_line) + ")");
    }
  }
  map->children.push_back(std::move(entry));
  return Status::Ok();
}

Result<YamlNode> YamlParser::Parse(std::string_view text) {
  RETURN_IF_ERROR(SplitLines(text));
  RETURN_IF_ERROR(SkipToContent());
  if (AtEof()) {
    YamlNode empty;
    empty.kind = YamlNode::Kind::kMap;
    empty.line = 1;
    return empty;
  }
  const size_t indent = col_;
  ASSIGN_OR_RETURN(YamlNode root, ParseBlockNode(0));
  if (!AtEof()) {
    if (col_ < indent) return BadIndent(indent);
    return Error("unexpected content after the document's value");
  }
  return root;
}

// The node whose first character is under the cursor; its indentation is
// the cursor's column. Leaves the cursor on the next content line.
Result<YamlNode> YamlParser::ParseBlockNode(int depth) {
  if (depth > kMaxDepth) return Error("nesting deeper than 64 levels");
  if (AtListItem()) return ParseBlockList(col_, false, depth);
  if (IsMapEntry()) return ParseBlockMap(col_, depth);
  return ParseInlineValue(depth);
}

Result<YamlNode> YamlParser::ParseBlockMap(size_t indent, int depth) {
  YamlNode map;
  map.kind = YamlNode::Kind::kMap;
  map.line = LineNo();
  while (true) {
    if (AtListItem()) {
      return Error("expected 'key: value', found a list item");
    }
    RETURN_IF_ERROR(CheckIndicator());
    if (!IsMapEntry()) {
      return Error("expected 'key: value', found \"" +
                   std::string(TrimRight(Line().substr(col_))) + "\"");
    }
    const int32_t key_line = LineNo();
    std::string key;
    if (Peek() == '"' || Peek() == '\'') {
      ASSIGN_OR_RETURN(key, ParseQuoted());
      RETURN_IF_ERROR(SkipSpaces());
    } else {
      const size_t begin = col_;
      while (!(Peek() == ':' && (Peek(1) == ' ' || Peek(1) == '\n'))) {
        if (Peek() == '\t') return Error("tab character (use spaces)");
        ++col_;
      }
      key = std::string(TrimRight(Line().substr(begin, col_ - begin)));
    }
    ++col_;  // the ':'
    RETURN_IF_ERROR(SkipSpaces());
    YamlNode value;
    if (AtLineEnd()) {
      RETURN_IF_ERROR(NextContentLine());
      if (!AtEof() && col_ > indent) {
        ASSIGN_OR_RETURN(value, ParseBlockNode(depth + 1));
      } else if (!AtEof() && col_ == indent && AtListItem()) {
        ASSIGN_OR_RETURN(value, ParseBlockList(indent, true, depth + 1));
      } else {
        value.line = key_line;  // empty value
      }
    } else {
      if (AtListItem()) {
        return Error("a list cannot start on the line of its key");
      }
      ASSIGN_OR_RETURN(value, ParseInlineValue(depth + 1));
    }
    value.key = std::move(key);
    value.key_line = key_line;
    RETURN_IF_ERROR(AddEntry(&map, std::move(value)));
    if (AtEof() || col_ < indent) return map;
    if (col_ > indent) return BadIndent(indent);
  }
}

// `at_key_indent`: the list is the value of a key at the same indentation,
// so a line at that indentation that is not an item belongs to the map.
Result<YamlNode> YamlParser::ParseBlockList(size_t indent, bool at_key_indent,
                                            int depth) {
  YamlNode list;
  list.kind = YamlNode::Kind::kList;
  list.line = LineNo();
  while (true) {
    const int32_t item_line = LineNo();
    ++col_;  // the '-'
    RETURN_IF_ERROR(SkipSpaces());
    YamlNode item;
    if (AtLineEnd()) {
      RETURN_IF_ERROR(NextContentLine());
      if (!AtEof() && col_ > indent) {
        ASSIGN_OR_RETURN(item, ParseBlockNode(depth + 1));
      } else {
        item.line = item_line;  // empty item
      }
    } else {
      ASSIGN_OR_RETURN(item, ParseBlockNode(depth + 1));
    }
    list.children.push_back(std::move(item));
    if (AtEof() || col_ < indent) return list;
    if (col_ > indent) return BadIndent(indent);
    if (!AtListItem()) {
      if (at_key_indent) return list;
      return Error("expected a list item ('- ') at this indentation");
    }
  }
}

// A flow collection or a scalar on the rest of the cursor's line. Leaves
// the cursor on the next content line.
Result<YamlNode> YamlParser::ParseInlineValue(int depth) {
  YamlNode node;
  node.line = LineNo();
  const char c = Peek();
  if (c == '{' || c == '[') {
    ASSIGN_OR_RETURN(node, ParseFlowNode(depth));
    RETURN_IF_ERROR(
        ExpectLineEnd(c == '{' ? "the flow mapping" : "the flow list"));
  } else if (c == '"' || c == '\'') {
    ASSIGN_OR_RETURN(node.text, ParseQuoted());
    node.quoted = true;
    RETURN_IF_ERROR(ExpectLineEnd("the quoted scalar"));
  } else {
    RETURN_IF_ERROR(CheckIndicator());
    ASSIGN_OR_RETURN(node.text, ParsePlain(false));
  }
  RETURN_IF_ERROR(NextContentLine());
  return node;
}

Result<YamlNode> YamlParser::ParseFlowNode(int depth) {
  if (depth > kMaxDepth) return Error("nesting deeper than 64 levels");
  const char c = Peek();
  if (c == '{' || c == '[') return ParseFlowCollection(c == '{', depth);
  YamlNode node;
  node.line = LineNo();
  if (c == '"' || c == '\'') {
    ASSIGN_OR_RETURN(node.text, ParseQuoted());
    node.quoted = true;
    return node;
  }
  RETURN_IF_ERROR(CheckIndicator());
  ASSIGN_OR_RETURN(node.text, ParsePlain(true));
  return node;
}

// `{...}` or `[...]`, from the opening bracket to past the closing one.
Result<YamlNode> YamlParser::ParseFlowCollection(bool is_map, int depth) {
  const char open = is_map ? '{' : '[';
  const char close = is_map ? '}' : ']';
  YamlNode node;
  node.kind = is_map ? YamlNode::Kind::kMap : YamlNode::Kind::kList;
  node.line = LineNo();
  const int32_t open_line = node.line;
  const auto unclosed = [&] {
    return ErrorAt(open_line, std::string("unclosed '") + open + "' (no '" +
                                  close + "' before the end of the input)");
  };
  ++col_;
  while (true) {
    RETURN_IF_ERROR(SkipFlowSpace());
    if (AtEof()) return unclosed();
    if (Peek() == close) break;
    YamlNode item;
    if (is_map) {
      if (Peek() == '{' || Peek() == '[') return Error("keys must be scalars");
      ASSIGN_OR_RETURN(const YamlNode key, ParseFlowNode(depth + 1));
      RETURN_IF_ERROR(SkipFlowSpace());
      if (AtEof()) return unclosed();
      if (Peek() != ':') {
        return Error("expected ':' after key '" + key.text + "', found " +
                     Describe(Peek()));
      }
      ++col_;
      RETURN_IF_ERROR(SkipFlowSpace());
      if (AtEof()) return unclosed();
      if (Peek() == ',' || Peek() == close) {
        item.line = key.line;  // empty value
      } else {
        ASSIGN_OR_RETURN(item, ParseFlowNode(depth + 1));
      }
      item.key = key.text;
      item.key_line = key.line;
      RETURN_IF_ERROR(AddEntry(&node, std::move(item)));
    } else {
      ASSIGN_OR_RETURN(item, ParseFlowNode(depth + 1));
      node.children.push_back(std::move(item));
    }
    RETURN_IF_ERROR(SkipFlowSpace());
    if (AtEof()) return unclosed();
    if (Peek() == ',') {
      ++col_;
      continue;
    }
    if (Peek() == close) break;
    if (!is_map && Peek() == ':') {
      return Error("'key: value' inside a flow list is not supported");
    }
    return Error(std::string("expected ',' or '") + close + "', found " +
                 Describe(Peek()));
  }
  ++col_;  // the closing bracket
  return node;
}

// A quoted scalar that ends on its line; the cursor ends past the quote.
Result<std::string> YamlParser::ParseQuoted() {
  const char quote = Peek();
  ++col_;
  std::string text;
  while (true) {
    const char c = Peek();
    if (c == '\n' || c == '\0') {
      return Error("unclosed quote (a quoted scalar must end on its line)");
    }
    ++col_;
    if (c == quote) {
      if (quote == '\'' && Peek() == '\'') {
        text.push_back('\'');
        ++col_;
        continue;
      }
      return text;
    }
    if (quote != '"' || c != '\\') {
      text.push_back(c);
      continue;
    }
    // Escapes as pairs: the letter after '\\', then what it stands for.
    static constexpr std::string_view kEscapes("\"\"\\\\//n\nt\tr\r0\0", 14);
    const char escaped = Peek();
    size_t e = 0;
    while (e < kEscapes.size() && kEscapes[e] != escaped) e += 2;
    if (escaped == '\n') {
      return Error("unclosed quote (a quoted scalar must end on its line)");
    }
    if (e >= kEscapes.size()) {
      return Error(std::string("unsupported escape '\\") + escaped +
                   "' in a double-quoted scalar");
    }
    text.push_back(kEscapes[e + 1]);
    ++col_;
  }
}

// A plain scalar: up to a comment or the end of the line, in a flow
// collection also up to a flow indicator or a ':' that ends a key. In block
// context it may not hold ': ' (`a: b: c`).
Result<std::string> YamlParser::ParsePlain(bool flow) {
  const std::string_view line = Line();
  size_t end = col_;
  for (; end < line.size(); ++end) {
    const char c = line[end];
    const char next = end + 1 < line.size() ? line[end + 1] : ' ';
    if (c == '\t') return Error("tab character (use spaces)");
    if (c == '#' && end > col_ && line[end - 1] == ' ') break;
    if (!flow && c == ':' && next == ' ') {
      return Error("': ' inside a plain value; quote the value");
    }
    if (flow && (std::string_view(",[]{}").find(c) != std::string_view::npos ||
                 (c == ':' && std::string_view(" ,]}").find(next) !=
                                  std::string_view::npos))) {
      break;
    }
  }
  std::string text(TrimRight(line.substr(col_, end - col_)));
  col_ = end;
  return text;
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
  return YamlParser(source).Parse(text);
}

}  // namespace strag::sim
