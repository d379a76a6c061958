// SPDX-License-Identifier: Apache-2.0
// The YAML subset of job specs: what it reads, the lines it remembers, and
// the constructs it rejects with the source and the line.

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

TEST(SpecYamlTest, Errors) {
  struct Case {
    std::string_view text;
    std::string_view message;  // the whole message
  };
  const Case cases[] = {
      {"a: 1\n\tb: 2\n", "t.yaml: line 2: tab in indentation (use spaces)"},
      {"a:\t1\n", "t.yaml: line 1: tab character (use spaces)"},
      {"a: [1,\t2]\n", "t.yaml: line 1: tab character (use spaces)"},
      {"a: &x 1\n", "t.yaml: line 1: anchors ('&') are not supported"},
      {"a: *x\n", "t.yaml: line 1: aliases ('*') are not supported"},
      {"a: !!int 1\n", "t.yaml: line 1: tags ('!') are not supported"},
      {"a: [!x 1]\n", "t.yaml: line 1: tags ('!') are not supported"},
      {"a: |\n  text\n",
       "t.yaml: line 1: block scalars ('|') are not supported"},
      {"a: >-\n  text\n",
       "t.yaml: line 1: block scalars ('>') are not supported"},
      {"%YAML 1.2\n---\na: 1\n",
       "t.yaml: line 1: directives ('%') are not supported"},
      {"? a\n: 1\n", "t.yaml: line 1: complex keys ('?') are not supported"},
      {"a: 1\nb: 2\na: 3\n",
       "t.yaml: line 3: duplicate key 'a' (first on line 1)"},
      {"a: {x: 1,\n    x: 2}\n",
       "t.yaml: line 2: duplicate key 'x' (first on line 1)"},
      {"a: 1\n  b: 2\n",
       "t.yaml: line 2: bad indentation: 2 spaces, expected 0 (only a 'key:' "
       "with nothing after it opens a deeper block)"},
      {"a:\n    b: 1\n  c: 2\n",
       "t.yaml: line 3: bad indentation: 2 spaces, expected 0 (only a 'key:' "
       "with nothing after it opens a deeper block)"},
      {"  a: 1\nb: 2\n",
       "t.yaml: line 2: bad indentation: 0 spaces, expected 2 (only a 'key:' "
       "with nothing after it opens a deeper block)"},
      {"a:\n  - 1\n  b: 2\n",
       "t.yaml: line 3: expected a list item ('- ') at this indentation"},
      {"a: 1\n- 2\n",
       "t.yaml: line 2: expected 'key: value', found a list item"},
      {"a: 1\nplain\n",
       "t.yaml: line 2: expected 'key: value', found \"plain\""},
      {"a: - 1\n",
       "t.yaml: line 1: a list cannot start on the line of its key"},
      {"a: [1, 2\nb: 3\n", "t.yaml: line 2: expected ',' or ']', found 'b'"},
      {"a: [1, [2, 3]\n",
       "t.yaml: line 1: unclosed '[' (no ']' before the end of the input)"},
      {"a: {x: 1\n",
       "t.yaml: line 1: unclosed '{' (no '}' before the end of the input)"},
      {"a: {x: 1]\n", "t.yaml: line 1: expected ',' or '}', found ']'"},
      {"a: [1, 2]]\n", "t.yaml: line 1: unexpected ']' after the flow list"},
      {"a: {x 1}\n", "t.yaml: line 1: expected ':' after key 'x 1', found '}'"},
      {"a: {x: 1 y: 2}\n", "t.yaml: line 1: expected ',' or '}', found ':'"},
      {"a: {[x]: 1}\n", "t.yaml: line 1: keys must be scalars"},
      {"a: [x: 1]\n",
       "t.yaml: line 1: 'key: value' inside a flow list is not supported"},
      {"a: [1, , 2]\n", "t.yaml: line 1: expected a value, found ','"},
      {"a: [1,#c\n2]\n",
       "t.yaml: line 1: unexpected '#' (a comment needs a space before "
       "it)"},
      {"a: 'open\n",
       "t.yaml: line 1: unclosed quote (a quoted scalar must end "
       "on its line)"},
      {"a: \"x\\q\"\n",
       "t.yaml: line 1: unsupported escape '\\q' in a double-quoted scalar"},
      {"a: \"x\" y\n",
       "t.yaml: line 1: unexpected 'y' after the quoted scalar"},
      {"a: b: c\n",
       "t.yaml: line 1: ': ' inside a plain value; quote the value"},
      {"a: 1\n---\nb: 2\n",
       "t.yaml: line 2: a second document ('---') is not supported"},
      {"a: 1\n...\nb: 2\n",
       "t.yaml: line 3: content after the end of the document ('...')"},
      {"--- a: 1\n",
       "t.yaml: line 1: content on a '---' line is not supported"},
      {"a: 1\nb: x\x01y\n", "t.yaml: line 2: control character (byte 1)"},
      {"a: @x\n", "t.yaml: line 1: '@' is reserved; quote it"},
      {"\"\": 1\n", "t.yaml: line 1: empty key"},
      {"a: {x: 1}: 2\n",
       "t.yaml: line 1: unexpected ':' after the flow mapping"},
      {"a\nb\n",
       "t.yaml: line 2: unexpected content after the document's value"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ErrorOf(c.text), c.message) << c.text;
  }
  // Hostile nesting ends in an error, not a stack overflow.
  const std::string deep = "a: " + std::string(100000, '[');
  EXPECT_EQ(ErrorOf(deep), "t.yaml: line 1: nesting deeper than 64 levels");
}

}  // namespace
}  // namespace strag::sim
