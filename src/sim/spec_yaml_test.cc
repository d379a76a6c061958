// SPDX-License-Identifier: Apache-2.0
// The YAML of job specs (yaml-cpp): what it reads, the lines it remembers,
// and what it rejects with the source, the line and the column.

#include "sim/spec_yaml.h"

#include <gtest/gtest.h>

#include <string>

namespace strag::sim {

// The example of issue 3 (the job spec contract), verbatim; job_spec_test.cc
// reads it too.
extern const std::string_view kIssueExample;
const std::string_view kIssueExample =
    R"(job:   {dp: 64, pp: 8, tp: 8, cp: 1, vpp: 1, microbatches: 16, steps: 20, gpus_per_node: 8, gpu_hour_usd: 2.0, seed: 1}
model: {layers: 64, loss_layer_cost: 9.0}           # stage partition: layers per stage (even by default, or a list), loss layer on the last stage, in transformer-layer units
compute: {forward_ms: 8.0, backward_ms: 16.0, noise: {dist: lognormal, sigma: 0.02}}   # per microbatch per stage at the reference sequence length
sequences: {dist: fixed, length: 4096}                # or {dist: lognormal, median: 2048, sigma: 1.0, max: 32768} or {dist: file, path: lengths.txt}; cost per microbatch = a·Σs + b·Σs² (coefficients configurable)
comm:  {p2p_ms: 0.3, dp_allgather_ms: 12, dp_reducescatter_ms: 18, noise: {dist: lognormal, sigma: 0.05}}
stragglers:
  - {kind: slow_worker, rank: 1842, factor: 1.2}                       # persistent; optional steps: [from, to] or probability per step (transient)
  - {kind: gc_pause, rate_per_step: 0.05, pause_ms: 300, ranks: all}     # unsynchronised host pauses before a forward; planned: {every: 500} synchronises them
  - {kind: slow_link, node: 12, factor: 3.0}                           # communication of every group that includes the node
  - {kind: dataloader_stall, rank: 7, probability: 0.1, stall_ms: 200}
)";

namespace {

using Kind = YamlNode::Kind;

YamlNode MustParse(std::string_view text) {
  auto node = ParseYaml(text, "t.yaml");
  EXPECT_TRUE(node.ok()) << node.status().message();
  return node.ok() ? *node : YamlNode{};
}

std::string ErrorOf(std::string_view text) {
  auto node = ParseYaml(text, "t.yaml");
  EXPECT_FALSE(node.ok()) << "accepted: " << text;
  if (node.ok()) return "";
  EXPECT_EQ(node.status().code(), StatusCode::kInvalidInput);
  return node.status().message();
}

TEST(SpecYamlTest, IssueExample) {
  const YamlNode root = MustParse(kIssueExample);
  ASSERT_EQ(root.kind, Kind::kMap);
  ASSERT_EQ(root.children.size(), 6u);
  EXPECT_EQ(root.children[0].key, "job");
  EXPECT_EQ(root.children[5].key, "stragglers");

  const YamlNode* job = root.Find("job");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->kind, Kind::kMap);
  EXPECT_EQ(job->children.size(), 10u);
  EXPECT_EQ(job->Find("gpu_hour_usd")->text, "2.0");
  EXPECT_EQ(job->line, 1);

  // The comment after the flow map is not part of it.
  const YamlNode* seq = root.Find("sequences");
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->children.size(), 2u);
  EXPECT_EQ(seq->Find("length")->text, "4096");
  EXPECT_EQ(seq->line, 4);

  const YamlNode* noise = root.Find("compute")->Find("noise");
  ASSERT_NE(noise, nullptr);
  EXPECT_EQ(noise->Find("dist")->text, "lognormal");
  EXPECT_EQ(noise->Find("sigma")->text, "0.02");

  const YamlNode* stragglers = root.Find("stragglers");
  ASSERT_EQ(stragglers->kind, Kind::kList);
  ASSERT_EQ(stragglers->children.size(), 4u);
  EXPECT_EQ(stragglers->key_line, 6);
  const YamlNode& gc = stragglers->children[1];
  EXPECT_EQ(gc.line, 8);
  EXPECT_EQ(gc.Find("kind")->text, "gc_pause");
  EXPECT_EQ(gc.Find("ranks")->text, "all");
  EXPECT_EQ(gc.Find("pause_ms")->line, 8);
  EXPECT_EQ(stragglers->children[3].Find("stall_ms")->text, "200");
}

TEST(SpecYamlTest, BlockMapsAndLines) {
  const YamlNode root = MustParse(
      "# a spec\n"
      "\n"
      "job:\n"
      "  dp: 4   # data parallel\n"
      "  name: a#b\n"
      "  nested:\n"
      "      deep: x y z\n"
      "  after: 1\n"
      "empty:\n"
      "top: -1.5e3\n");
  ASSERT_EQ(root.kind, Kind::kMap);
  const YamlNode* job = root.Find("job");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->key_line, 3);
  EXPECT_EQ(job->line, 4);  // the content starts under the key
  EXPECT_EQ(job->Find("dp")->text, "4");
  EXPECT_EQ(job->Find("dp")->line, 4);
  EXPECT_EQ(job->Find("name")->text, "a#b");
  EXPECT_EQ(job->Find("nested")->Find("deep")->text, "x y z");
  EXPECT_EQ(job->Find("nested")->Find("deep")->line, 7);
  EXPECT_EQ(job->Find("after")->line, 8);
  const YamlNode* empty = root.Find("empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->IsNull());
  EXPECT_EQ(empty->line, 9);
  EXPECT_EQ(empty->KindName(), "nothing");
  EXPECT_EQ(root.Find("top")->text, "-1.5e3");
  EXPECT_EQ(root.Find("missing"), nullptr);
}

TEST(SpecYamlTest, BlockLists) {
  const YamlNode root = MustParse(
      "scalars:\n"
      "  - 1\n"
      "  - two\n"
      "  -\n"
      "flows:\n"
      "- {kind: a, rank: 1}\n"
      "- [1, 2]\n"
      "compact:\n"
      "  - kind: b\n"
      "    rank: 2\n"
      "  - - x\n"
      "    - y\n"
      "  -\n"
      "    kind: c\n"
      "last: end\n");
  const YamlNode* scalars = root.Find("scalars");
  ASSERT_EQ(scalars->kind, Kind::kList);
  ASSERT_EQ(scalars->children.size(), 3u);
  EXPECT_EQ(scalars->children[1].text, "two");
  EXPECT_EQ(scalars->children[1].line, 3);
  EXPECT_TRUE(scalars->children[2].IsNull());

  // A list at its key's indentation ends where the next key starts.
  const YamlNode* flows = root.Find("flows");
  ASSERT_EQ(flows->kind, Kind::kList);
  ASSERT_EQ(flows->children.size(), 2u);
  EXPECT_EQ(flows->children[0].Find("rank")->text, "1");
  EXPECT_EQ(flows->children[1].kind, Kind::kList);

  const YamlNode* compact = root.Find("compact");
  ASSERT_EQ(compact->children.size(), 3u);
  EXPECT_EQ(compact->children[0].Find("rank")->text, "2");
  EXPECT_EQ(compact->children[0].Find("rank")->line, 10);
  ASSERT_EQ(compact->children[1].kind, Kind::kList);
  EXPECT_EQ(compact->children[1].children[1].text, "y");
  EXPECT_EQ(compact->children[2].Find("kind")->text, "c");
  EXPECT_EQ(root.Find("last")->text, "end");
}

TEST(SpecYamlTest, RootList) {
  const YamlNode root = MustParse("- a\n- b: 1\n  c: 2\n- [x]\n");
  ASSERT_EQ(root.kind, Kind::kList);
  ASSERT_EQ(root.children.size(), 3u);
  EXPECT_EQ(root.children[1].Find("c")->text, "2");
}

TEST(SpecYamlTest, FlowCollections) {
  const YamlNode root = MustParse(
      "a: {x: 1, y: [1, [2, 3], {z: w}], e: , q: \"s, t\", }\n"
      "b: [\n"
      "  1,   # one\n"
      "  2,\n"
      "  {k: v}\n"
      "]\n"
      "c: []\n"
      "d: {}\n"
      "e: {\"json\":1, 'k':  [ ]}\n"
      "f: [a b, c:d, http://x]\n");
  const YamlNode* a = root.Find("a");
  ASSERT_EQ(a->kind, Kind::kMap);
  ASSERT_EQ(a->children.size(), 4u);
  const YamlNode* y = a->Find("y");
  ASSERT_EQ(y->children.size(), 3u);
  EXPECT_EQ(y->children[1].children[1].text, "3");
  EXPECT_EQ(y->children[2].Find("z")->text, "w");
  EXPECT_TRUE(a->Find("e")->IsNull());
  EXPECT_EQ(a->Find("q")->text, "s, t");
  EXPECT_TRUE(a->Find("q")->quoted);

  const YamlNode* b = root.Find("b");
  ASSERT_EQ(b->children.size(), 3u);
  EXPECT_EQ(b->line, 2);
  EXPECT_EQ(b->children[1].line, 4);
  EXPECT_EQ(b->children[2].Find("k")->line, 5);
  EXPECT_EQ(root.Find("c")->kind, Kind::kList);
  EXPECT_TRUE(root.Find("c")->children.empty());
  EXPECT_EQ(root.Find("d")->kind, Kind::kMap);
  EXPECT_EQ(root.Find("c")->line, 7);
  EXPECT_EQ(root.Find("e")->Find("json")->text, "1");
  EXPECT_EQ(root.Find("e")->Find("k")->kind, Kind::kList);
  const YamlNode* f = root.Find("f");
  ASSERT_EQ(f->children.size(), 3u);
  EXPECT_EQ(f->children[0].text, "a b");
  EXPECT_EQ(f->children[1].text, "c:d");
  EXPECT_EQ(f->children[2].text, "http://x");
}

TEST(SpecYamlTest, QuotedScalars) {
  const YamlNode root = MustParse(
      "single: 'it''s # not a comment'\n"
      "double: \"a\\\"b\\\\c\\n\\t\\/\"\n"
      "empty: ''\n"
      "\"quoted key\": 1\n"
      "'k: v': 2\n"
      "tab: \"a\tb\"\n");
  EXPECT_EQ(root.Find("single")->text, "it's # not a comment");
  EXPECT_EQ(root.Find("double")->text, "a\"b\\c\n\t/");
  EXPECT_TRUE(root.Find("empty")->quoted);
  EXPECT_FALSE(root.Find("empty")->IsNull());
  EXPECT_EQ(root.Find("quoted key")->text, "1");
  EXPECT_EQ(root.Find("k: v")->text, "2");
  EXPECT_EQ(root.Find("tab")->text, "a\tb");
}

TEST(SpecYamlTest, DocumentMarkersBomCrlfAndEmpty) {
  const YamlNode root = MustParse(
      "\xEF\xBB\xBF# c\r\n---\r\na: 1\r\nb: [1, 2]\r\n...\r\n# end\r\n");
  EXPECT_EQ(root.Find("a")->text, "1");
  EXPECT_EQ(root.Find("a")->line, 3);
  EXPECT_EQ(root.Find("b")->children[1].text, "2");

  for (std::string_view empty : {"", "\n\n", "# only a comment\n", "---\n"}) {
    const YamlNode node = MustParse(empty);
    EXPECT_EQ(node.kind, Kind::kMap);
    EXPECT_TRUE(node.children.empty());
  }
  EXPECT_EQ(MustParse("just text").text, "just text");
  EXPECT_EQ(MustParse("  a: 1\n  b: 2\n").children.size(), 2u);
}

// YAML beyond the old subset, as yaml-cpp reads it: anchors and aliases
// (expanded), block and multi-line scalars, tags, complex keys,
// directives, tabs as separation, empty flow entries.
TEST(SpecYamlTest, FullYaml) {
  const YamlNode root = MustParse(
      "%YAML 1.2\n"
      "---\n"
      "base: &slow {kind: slow_worker, factor: 1.5}\n"
      "stragglers:\n"
      "  - *slow\n"
      "  - &two\n"
      "    kind: gc_pause\n"
      "    pause_ms: !!float 300\n"
      "  - *two\n"
      "note: |\n"
      "  two\n"
      "  lines\n"
      "folded: >-\n"
      "  one\n"
      "  line\n"
      "plain: a\n"
      "  b\n"
      "quoted: \"x\n"
      "  y\"\n"
      "str: !!str 8\n"
      "tab:\t1\n"
      "? complex\n"
      ": 2\n"
      "nul: null\n"
      "tilde: ~\n"
      "...\n");
  const YamlNode* list = root.Find("stragglers");
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->children.size(), 3u);
  EXPECT_EQ(list->children[0].Find("factor")->text, "1.5");
  EXPECT_EQ(list->children[0].line, 5);  // the alias's line
  EXPECT_EQ(list->children[0].Find("factor")->line, 3);  // the anchor's
  EXPECT_EQ(list->children[2].Find("pause_ms")->text, "300");
  EXPECT_EQ(list->children[2].Find("kind")->line, 7);
  EXPECT_EQ(root.Find("note")->text, "two\nlines\n");
  EXPECT_TRUE(root.Find("note")->quoted);
  EXPECT_EQ(root.Find("folded")->text, "one line");
  EXPECT_EQ(root.Find("plain")->text, "a b");
  EXPECT_FALSE(root.Find("plain")->quoted);
  EXPECT_EQ(root.Find("quoted")->text, "x y");
  EXPECT_TRUE(root.Find("str")->quoted);
  EXPECT_EQ(root.Find("tab")->text, "1");
  EXPECT_EQ(root.Find("complex")->text, "2");
  // Nulls keep their text; only an empty value is "nothing".
  EXPECT_EQ(root.Find("nul")->text, "null");
  EXPECT_FALSE(root.Find("nul")->IsNull());
  EXPECT_EQ(root.Find("tilde")->text, "~");

  const YamlNode flow = MustParse("a: [1, , 2]\nb: {x: , y}\n");
  ASSERT_EQ(flow.Find("a")->children.size(), 3u);
  EXPECT_TRUE(flow.Find("a")->children[1].IsNull());
  EXPECT_TRUE(flow.Find("b")->Find("y")->IsNull());
}

// An empty list item is on the line of its '-', not of the next token.
TEST(SpecYamlTest, EmptyNodesKeepTheirLine) {
  const YamlNode root = MustParse(
      "list:\n"
      "  - 1\n"
      "  -   # nothing\n"
      "\n"
      "  # between\n"
      "  -\n"
      "last:\n");
  const YamlNode* list = root.Find("list");
  ASSERT_EQ(list->children.size(), 3u);
  EXPECT_EQ(list->children[1].line, 3);
  EXPECT_EQ(list->children[2].line, 6);
  EXPECT_EQ(root.Find("last")->line, 7);
}

TEST(SpecYamlTest, Errors) {
  struct Case {
    std::string_view text;
    std::string_view message;  // the whole message
  };
  const Case cases[] = {
      {"a: 1\n\tb: 2\n",
       "t.yaml: line 2, column 1: tab in indentation (use spaces)"},
      {"a: *x\n",
       "t.yaml: line 1, column 4: alias '*x' names no anchor defined before "
       "it"},
      {"x: &a [1, *a]\n",
       "t.yaml: line 1, column 11: alias '*a' refers to the node that "
       "contains it"},
      {"a: [!x 1]\n",
       "t.yaml: line 1, column 5: unsupported tag '!x' (only YAML's core "
       "tags: !!str, !!int, !!float, !!bool, !!null, !!map, !!seq)"},
      {"a: 1\nb: 2\na: 3\n",
       "t.yaml: line 3, column 1: duplicate key 'a' (first on line 1)"},
      {"a: {x: 1,\n    x: 2}\n",
       "t.yaml: line 2, column 5: duplicate key 'x' (first on line 1)"},
      {"a: 1\n  b: 2\n",
       "t.yaml: line 2, column 4: unexpected ':' (quote a value that holds "
       "': ', or check the indentation)"},
      {"a:\n    b: 1\n  c: 2\n",
       "t.yaml: line 3, column 3: expected the next 'key: value' of the map "
       "at its indentation, found \"c: 2\" (check the indentation)"},
      {"  a: 1\nb: 2\n",
       "t.yaml: line 2, column 1: content after the end of the document "
       "(check the indentation)"},
      {"a:\n  - 1\n  b: 2\n",
       "t.yaml: line 3, column 3: expected the next 'key: value' of the map "
       "at its indentation, found \"b: 2\" (check the indentation)"},
      {"a: 1\n- 2\n",
       "t.yaml: line 2, column 1: expected 'key: value', found a list item "
       "(check the indentation)"},
      {"a: 1\nplain\n",
       "t.yaml: line 2, column 1: expected 'key: value', found \"plain\""},
      {"a: - 1\n",
       "t.yaml: line 1, column 4: a list item ('- ') cannot start here (a "
       "block list starts on the line after its key)"},
      {"a: [1, 2\nb: 3\n",
       "t.yaml: line 2, column 2: expected ',' or ']', found ':'"},
      {"a: [1, [2, 3]\n",
       "t.yaml: line 1, column 4: unclosed '[' (no ']' before the end of the "
       "input)"},
      {"a: {x: 1\n",
       "t.yaml: line 1, column 4: unclosed '{' (no '}' before the end of the "
       "input)"},
      {"a: {x: 1]\n",
       "t.yaml: line 1, column 9: unexpected ']' (it closes no open "
       "bracket)"},
      {"a: [1, 2]]\n",
       "t.yaml: line 1, column 10: unexpected ']' (it closes no open "
       "bracket)"},
      {"a: {x: 1 y: 2}\n",
       "t.yaml: line 1, column 11: expected ',' or '}', found ':'"},
      {"a: {[x]: 1}\n", "t.yaml: line 1, column 5: keys must be scalars"},
      {"a: 'open\n",
       "t.yaml: line 1, column 4: unclosed quote (no closing ' before the "
       "end of the input)"},
      {"a: \"open\nb: 2\n",
       "t.yaml: line 1, column 4: unclosed quote (no closing \" before the "
       "end of the input)"},
      {"a: \"x\\q\"\n",
       "t.yaml: line 1, column 8: unsupported escape '\\q' in a "
       "double-quoted scalar"},
      {"a: \"x\" y\n",
       "t.yaml: line 1, column 8: expected the next 'key: value' of the map "
       "at its indentation, found \"y\" (check the indentation)"},
      {"a: b: c\n",
       "t.yaml: line 1, column 5: unexpected ':' (quote a value that holds "
       "': ', or check the indentation)"},
      {"a: 1\n---\nb: 2\n",
       "t.yaml: line 2, column 1: a second document ('---') is not "
       "supported"},
      {"a: 1\n...\nb: 2\n",
       "t.yaml: line 3, column 1: content after the end of the document "
       "(check the indentation)"},
      {"a: 1\nb: x\x01y\n",
       "t.yaml: line 2, column 5: control character (byte 1)"},
      {"a: 1\nb: x\x04y\n",
       "t.yaml: line 2, column 5: control character (byte 4)"},
      {"a: @x\n", "t.yaml: line 1, column 4: '@' is reserved; quote it"},
      {"\"\": 1\n", "t.yaml: line 1, column 1: empty key"},
      {"a: {x: 1}: 2\n",
       "t.yaml: line 1, column 10: unexpected ':' (quote a value that holds "
       "': ', or check the indentation)"},
      {"\xFF\xFE" "a\0:\0", "t.yaml: line 1, column 1: UTF-16 or UTF-32 "
       "text (byte order mark); save the file as UTF-8"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ErrorOf(c.text), c.message) << c.text;
  }
}

// Hostile inputs end in one error, quickly and in bounded memory (the
// fuzzer and the CLI's resource test run the same under ASan / ulimit).
TEST(SpecYamlTest, HostileNesting) {
  // 1 MB of brackets: yaml-cpp would queue a token for each (250 MB) and
  // recurse 2000 levels; a scan of the text stops at the 65th, before
  // yaml-cpp reads it (10 ms).
  for (const char open : {'[', '{'}) {
    const std::string deep = "a: " + std::string(size_t{1} << 20, open);
    EXPECT_EQ(ErrorOf(deep),
              "t.yaml: line 1, column 68: nesting deeper than 64 levels");
  }
  // Brackets in quotes, comments and inside plain scalars do not nest.
  const std::string many(100, '[');
  EXPECT_EQ(MustParse("a: '" + many + "'\nb: x" + many + "\n# " + many +
                      "\nc: \"\\\"" + many + "\"\n")
                .children.size(),
            3u);
  // Flow maps nest the same way.
  std::string maps = "a: ";
  for (int i = 0; i < 100000; ++i) maps += "{a: ";
  EXPECT_EQ(ErrorOf(maps),
            "t.yaml: line 1, column 260: nesting deeper than 64 levels");
  std::string blocks;
  for (int i = 0; i < 100; ++i) {
    blocks += std::string(static_cast<size_t>(i) * 2, ' ') + "- \n";
  }
  EXPECT_NE(ErrorOf(blocks).find("nesting deeper than 64 levels"),
            std::string::npos);
  // 64 levels are fine.
  const std::string ok = std::string(63, '[') + std::string(63, ']');
  EXPECT_EQ(MustParse("a: " + ok).Find("a")->kind, Kind::kList);
  // Aliases cannot build depth past the limit either.
  const std::string chain =
      "a0: &a0 " + std::string(38, '[') + "x" + std::string(38, ']') +
      "\na1: &a1 " + std::string(37, '[') + "*a0" + std::string(37, ']');
  EXPECT_EQ(ErrorOf(chain),
            "t.yaml: line 2, column 46: nesting deeper than 64 levels");
}

// "Billion laughs": each anchor repeats the one before ten times; the tree
// would hold 10^9 nodes. The budget stops it at 2^20, in milliseconds.
TEST(SpecYamlTest, AliasExpansionIsBounded) {
  std::string laughs = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, "
                       "lol]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = std::string("*l").append(std::to_string(i - 1));
    const std::string name = std::to_string(i);
    laughs.append("l").append(name).append(": &l").append(name).append(" [");
    for (int j = 0; j < 10; ++j) laughs += (j ? ", " : "") + prev;
    laughs += "]\n";
  }
  const std::string message = ErrorOf(laughs);
  EXPECT_NE(message.find("t.yaml: line 6, column "), std::string::npos)
      << message;
  EXPECT_NE(message.find("the document holds more than 1048576 nodes or 64 "
                         "MiB of text (an alias counts its anchor's content "
                         "at every use)"),
            std::string::npos)
      << message;

  // A long scalar used many times: bounded by its bytes.
  std::string wide = "s: &s " + std::string(size_t{1} << 20, 'x') + "\nl: [";
  for (int i = 0; i < 100; ++i) wide += "*s, ";
  wide += "]\n";
  EXPECT_NE(ErrorOf(wide).find("64 MiB of text"), std::string::npos);

  // Within the budget, aliases expand into copies.
  const YamlNode root = MustParse("a: &a [1, 2]\nb: [*a, *a]\n");
  EXPECT_EQ(root.Find("b")->children[1].children[1].text, "2");
}

// Long scalars, invalid UTF-8, NUL, many keys: parsed or refused, linearly.
TEST(SpecYamlTest, HostileScalarsAndBytes) {
  const std::string long_plain(size_t{1} << 20, 'y');
  EXPECT_EQ(MustParse("a: " + long_plain).Find("a")->text.size(),
            size_t{1} << 20);
  EXPECT_EQ(MustParse("a: \"" + long_plain + "\"").Find("a")->text.size(),
            size_t{1} << 20);
  // Bytes that are not UTF-8 pass through as they are (the CLI escapes
  // what it echoes).
  EXPECT_EQ(MustParse("a: \xff\xfe\xc3\n").Find("a")->text, "\xff\xfe\xc3");
  EXPECT_EQ(ErrorOf(std::string("a: 1\nb: \0\n", 10)),
            "t.yaml: line 2, column 4: control character (byte 0)");
  EXPECT_EQ(ErrorOf("a: 1\x7f"),
            "t.yaml: line 1, column 5: control character (byte 127)");
  // 100,000 keys: duplicates are found through an index, not by a scan.
  std::string keys;
  for (int i = 0; i < 100000; ++i) {
    keys.append("k").append(std::to_string(i)).append(": 1\n");
  }
  EXPECT_EQ(MustParse(keys).children.size(), 100000u);
  EXPECT_EQ(ErrorOf(keys + "k5: 2\n"),
            "t.yaml: line 100001, column 1: duplicate key 'k5' (first on line "
            "6)");
}

}  // namespace
}  // namespace strag::sim
