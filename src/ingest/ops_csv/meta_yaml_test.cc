// SPDX-License-Identifier: Apache-2.0
#include "ingest/ops_csv/meta_yaml.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingest/common/file.h"

namespace strag::ingest {
namespace {

using Raw = std::vector<std::pair<std::string, std::string>>;

void ExpectInvalid(std::string_view yaml,
                   std::initializer_list<std::string_view> parts) {
  const Result<trace::JobMeta> result = ParseJobMetaYaml(yaml, "meta.yaml");
  ASSERT_FALSE(result.ok()) << "parsed without error:\n" << yaml;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
  for (std::string_view part : parts) {
    EXPECT_NE(result.status().message().find(part), std::string::npos)
        << "message: " << result.status().message() << "\nmissing: " << part;
  }
}

// The published meta-AR.yaml: sizes land in the struct, every key in raw.
TEST(MetaYamlTest, ParsesPublishedMeta) {
  const Result<trace::JobMeta> meta = ParseJobMetaYaml(
      "trial_name: AR\nrun_id: 0\ndp_size: 4\ndsp_size: 1\npp_size: 4\n"
      "tp_size: 4\nvpp_size: 1\nworld_size: 64\n",
      "meta-AR.yaml");
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_EQ(meta->trial_name, "AR");
  EXPECT_EQ(meta->dp, 4);
  EXPECT_EQ(meta->pp, 4);
  EXPECT_EQ(meta->tp, 4);
  EXPECT_EQ(meta->cp, 1);
  EXPECT_EQ(meta->vpp, 1);
  EXPECT_EQ(meta->world_size, 64);
  EXPECT_EQ(meta->raw, (Raw{{"trial_name", "AR"},
                            {"run_id", "0"},
                            {"dp_size", "4"},
                            {"dsp_size", "1"},
                            {"pp_size", "4"},
                            {"tp_size", "4"},
                            {"vpp_size", "1"},
                            {"world_size", "64"}}));
}

// Comments, blank lines, CRLF, quoted values (with '#' and escapes), a
// document marker and cp_size as the synonym of dsp_size; absent keys keep
// the JobMeta defaults.
TEST(MetaYamlTest, ParsesCommentsAndQuotes) {
  const Result<trace::JobMeta> meta = ParseJobMetaYaml(
      "---\r\n# a job\r\n\r\ntrial_name: \"run #1 \\\"big\\\"\"  # note\r\n"
      "cp_size: '2'\r\nnote: it's a#b # comment\r\nempty:\r\n",
      "meta.yaml");
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_EQ(meta->trial_name, "run #1 \"big\"");
  EXPECT_EQ(meta->cp, 2);
  EXPECT_EQ(meta->dp, 0);
  EXPECT_EQ(meta->tp, 1);
  EXPECT_EQ(meta->raw, (Raw{{"trial_name", "run #1 \"big\""},
                            {"cp_size", "2"},
                            {"note", "it's a#b"},
                            {"empty", ""}}));
}

// Nested, indented or list lines are rejected with their line number.
TEST(MetaYamlTest, WrittenMetaReadsBack) {
  trace::JobMeta meta;
  meta.raw = {{"trial_name", "job"}, {"dp_size", "4"}, {"pp_size", "2"}};
  const std::string text = WriteJobMetaYaml(meta);
  EXPECT_EQ(text, "# written by strag simulate\ntrial_name: job\ndp_size: 4\n"
                  "pp_size: 2\n");
  const auto back = ParseJobMetaYaml(text, "meta.yaml");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->dp, 4);
  EXPECT_EQ(back->pp, 2);
  EXPECT_EQ(back->raw, meta.raw);
}

TEST(MetaYamlTest, RejectsNesting) {
  ExpectInvalid("trial_name: x\nparallel:\n  dp: 4\n",
                {"meta.yaml: line 3, column 3: key 'parallel': nested YAML is "
                 "not supported (only flat 'key: value' lines)"});
  ExpectInvalid("a: {b: 1}\n",
                {"meta.yaml: line 1, column 4: key 'a': nested YAML"});
  ExpectInvalid("- a\n", {"meta.yaml: line 1, column 1: lists are not "
                          "supported"});
  ExpectInvalid("a: [1]\n", {"meta.yaml: line 1, column 4: key 'a': lists"});
  ExpectInvalid("text: |\n  a\n  b\n",
                {"meta.yaml: line 1, column 7: key 'text': multi-line"});
  ExpectInvalid("a: 1\n---\nb: 2\n",
                {"meta.yaml: line 2, column 1: content after the end"});
}

// Full YAML where it stays flat: flow maps, folded and multi-line plain
// values, aliases of scalars, nulls.
TEST(MetaYamlTest, ParsesOtherYamlStyles) {
  const Result<trace::JobMeta> meta = ParseJobMetaYaml(
      "{trial_name: &t job, dp_size: 4,\n  alias: *t, folded: a\n  b,"
      " nul: null}\n",
      "meta.yaml");
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_EQ(meta->dp, 4);
  EXPECT_EQ(meta->raw, (Raw{{"trial_name", "job"},
                            {"dp_size", "4"},
                            {"alias", "job"},
                            {"folded", "a b"},
                            {"nul", "null"}}));
}

// Hostile inputs end in one error, quickly.
TEST(MetaYamlTest, RejectsHostileInput) {
  ExpectInvalid("a: " + std::string(size_t{1} << 20, '['),
                {"meta.yaml: line 1, column 68: nesting deeper than 64 "
                 "levels"});
  ExpectInvalid("a: " + std::string(60, '['),
                {"meta.yaml: line 1, column 4: key 'a': lists are not "
                 "supported"});
  ExpectInvalid(std::string("a: 1\nb: x\0y\n", 12),
                {"meta.yaml: line 2, column 5: control character (byte 0)"});
  ExpectInvalid("a: x\x04y\n",
                {"meta.yaml: line 1, column 5: control character (byte 4)"});
  std::string wide = "s: &s " + std::string(size_t{1} << 20, 'x') + "\n";
  for (int i = 0; i < 100; ++i) {
    wide.append("k").append(std::to_string(i)).append(": *s\n");
  }
  ExpectInvalid(wide, {"values hold more than 64 MiB"});
  EXPECT_TRUE(ParseJobMetaYaml("a: \xff\xfe\n", "meta.yaml").ok());
}

// A size key with a value that is not a positive integer names the key.
TEST(MetaYamlTest, RejectsBadSizes) {
  ExpectInvalid("trial_name: x\ndp_size: four\n",
                {"meta.yaml: line 2: key 'dp_size': \"four\" is not an "
                 "integer"});
  ExpectInvalid("pp_size: 2.5\n",
                {"meta.yaml: line 1: key 'pp_size': \"2.5\" is not an "
                 "integer"});
  ExpectInvalid("tp_size: 0\n",
                {"meta.yaml: line 1: key 'tp_size': 0 must be at least 1"});
  ExpectInvalid("world_size:\n",
                {"meta.yaml: line 1: key 'world_size': \"\" is not an "
                 "integer"});
  ExpectInvalid("dsp_size: 1\ncp_size: 2\n",
                {"meta.yaml: line 2: key 'cp_size': 2 disagrees", "line 1"});
}

// Other malformed lines: no colon, duplicate key, open quote.
TEST(MetaYamlTest, RejectsMalformedLines) {
  ExpectInvalid("a: 1\njust text\n",
                {"meta.yaml: line 2, column 1: expected 'key: value', found "
                 "\"just text\""});
  ExpectInvalid("a: 1\n  b: 2\n",
                {"meta.yaml: line 2, column 4: expected one 'key: value' per "
                 "line"});
  ExpectInvalid("a: 1\n\na: 2\n",
                {"meta.yaml: line 3, column 1: duplicate key 'a' (first on "
                 "line 1)"});
  ExpectInvalid("trial_name: \"open\n",
                {"meta.yaml: line 1, column 13: key 'trial_name': quoted "
                 "value has no closing quote"});
}

// The three published meta files parse (skipped without the data).
TEST(MetaYamlGoldenTest, PublishedMetaFiles) {
  const std::string dir = std::string(STRAG_SHARED_DATA_DIR) + "/osdi25-whatif";
  if (!std::filesystem::exists(dir + "/meta-AR.yaml")) {
    GTEST_SKIP() << "reference data not found at " << dir;
  }
  for (const char* name : {"AR", "ST", "SE"}) {
    const std::string path = dir + "/meta-" + name + ".yaml";
    const Result<std::string> text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status().message();
    const Result<trace::JobMeta> meta = ParseJobMetaYaml(*text, path);
    ASSERT_TRUE(meta.ok()) << meta.status().message();
    EXPECT_EQ(meta->trial_name, name);
    EXPECT_EQ(meta->WorldSize(),
              int64_t{meta->dp} * meta->pp * meta->tp * meta->cp);
  }
}

}  // namespace
}  // namespace strag::ingest
