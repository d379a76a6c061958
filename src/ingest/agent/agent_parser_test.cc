// SPDX-License-Identifier: Apache-2.0
#include "ingest/agent/agent_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace strag::ingest::agent {
namespace {

constexpr char kStep[] =
    R"({"kind":"step","job":"llm","rank":2,"epoch":7,"seq":3,"step":12,)"
    R"("t_end_ns":1700000000000000000,"step_ns":150000000,"data_ns":1000,)"
    R"("fwd_ns":40000000,"bwd_ns":80000000,"opt_ns":5000000,"gc_ns":0,)"
    R"("gc_n":0,"gc_gen":-1,"coll":{"dp":[20000000,3],"tp":[5,1]},)"
    R"("tokens":4096,"sum_s2":1.5e9,"flags":["ckpt"],"clock":"host"})";

TEST(AgentParser, ReadsEveryKind) {
  const std::string body =
      std::string(R"({"kind":"rank","job":"llm","rank":2,"epoch":7,"seq":1,)") +
      R"("world_size":4,"dp":2,"pp":0,"host":"n1","usd_per_gpu_hour":2.5})" +
      "\n" + R"({"kind":"drop","job":"llm","rank":2,"epoch":7,"seq":2,)" +
      R"("first_seq":2,"last_seq":2})" + "\n\n" + kStep + "\n";
  AgentParser parser;
  Result<AgentBatch> b = parser.Parse(body);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->records.size(), 3u);
  EXPECT_EQ(b->jobs, std::vector<std::string>{"llm"});
  EXPECT_EQ(b->records[0].kind, RecordKind::kRank);
  EXPECT_EQ(b->ranks[0].world_size, 4);
  EXPECT_EQ(b->ranks[0].host, "n1");
  EXPECT_DOUBLE_EQ(b->ranks[0].usd_per_gpu_hour, 2.5);
  EXPECT_EQ(b->records[1].kind, RecordKind::kDrop);
  EXPECT_EQ(b->records[2].line, 4);
  const StepRecord& s = b->steps[0];
  EXPECT_EQ(s.step, 12);
  EXPECT_EQ(s.step_ns, 150000000);
  EXPECT_EQ(s.coll_ns[0], 20000000);
  EXPECT_EQ(s.coll_n[0], 3);
  EXPECT_EQ(s.coll_ns[2], 5);
  EXPECT_EQ(s.CollNs(), 20000005);
  EXPECT_EQ(s.flags, uint32_t{kFlagCheckpoint});
  EXPECT_FALSE(s.gpu_clock);
  EXPECT_DOUBLE_EQ(s.sum_s2, 1.5e9);
}

std::string ErrorOf(std::string_view body) {
  AgentParser parser;
  Result<AgentBatch> b = parser.Parse(body);
  return b.ok() ? "ok" : b.status().message();
}

TEST(AgentParser, NamesTheLineAndTheField) {
  EXPECT_EQ(ErrorOf(std::string(kStep) + "\n{\"kind\":\"step\"}"),
            "line 2: missing field 'job'");
  EXPECT_EQ(ErrorOf(R"({"kind":"step","job":"a","rank":1,"epoch":0,"seq":1,)"
                    R"("step":1,"step_ns":-5})"),
            "line 1: field 'step_ns': -5 is out of range [0, 2305843009213693951]");
  EXPECT_EQ(ErrorOf(R"({"kind":"step","job":"a","rank":1,"epoch":0,"seq":1,)"
                    R"("step":1,"step_ns":1.5})"),
            "line 1: field 'step_ns': expected an integer");
  EXPECT_EQ(ErrorOf("{\"kind\":\"step\",\n").rfind("line 1: not JSON: ", 0),
            0u);
  EXPECT_EQ(ErrorOf(R"({"kind":"nope","job":"a","rank":1,"epoch":0,"seq":1})"),
            "line 1: field 'kind': 'nope' is not one of rank, step, drop");
  EXPECT_EQ(ErrorOf(R"({"kind":"step","job":"a b","rank":1,"epoch":0,"seq":1})"),
            "line 1: field 'job': expected 1-128 bytes of [A-Za-z0-9._:-]");
  EXPECT_EQ(ErrorOf(R"({"kind":"step","job":"a","rank":1,"epoch":0,"seq":0})"),
            "line 1: field 'seq': 0 is out of range [1, 2305843009213693951]");
  EXPECT_EQ(ErrorOf(R"({"kind":"step","job":"a","rank":1,"epoch":0,"seq":1,)"
                    R"("step":1,"step_ns":1,"coll":{"xx":[1,1]}})"),
            "line 1: field 'coll': unknown group 'xx' (dp, pp, tp, cp, ep, other)");
  EXPECT_EQ(ErrorOf("[1,2]"), "line 1: expected a JSON object");
}

TEST(AgentParser, Limits) {
  AgentParser parser({.max_records = 2, .max_line_bytes = 600});
  std::string body = std::string(kStep) + "\n" + kStep + "\n" + kStep + "\n";
  EXPECT_EQ(parser.Parse(body).status().message(),
            "line 3: more than 2 records in one request");
  std::string longline(700, ' ');
  EXPECT_EQ(parser.Parse(longline + "x").status().message(),
            "line 1: longer than 600 bytes");
}

TEST(AgentParser, ValidJobName) {
  EXPECT_TRUE(ValidJobName("llm-70b.run_3:a"));
  EXPECT_FALSE(ValidJobName(""));
  EXPECT_FALSE(ValidJobName("a\"b"));
  EXPECT_FALSE(ValidJobName(std::string(129, 'a')));
}

}  // namespace
}  // namespace strag::ingest::agent
