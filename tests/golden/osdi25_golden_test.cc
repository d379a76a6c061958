// SPDX-License-Identifier: Apache-2.0
// Golden test: the three production traces of the OSDI'25 artifact (AR, ST,
// SE) reproduce every published value (result-*.json, mw-*.json, ms-*.json).
// The data lives in ../shared/data/osdi25-whatif; the test skips without it.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "ingest/common/file.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_reader.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag {
namespace {

const std::string kDataDir =
    std::string(STRAG_SHARED_DATA_DIR) + "/osdi25-whatif";

// The issue asks for 1e-4; the implementation follows whatif-spec.md to the
// last bit, so anything above rounding noise is a regression.
constexpr double kRelTol = 1e-12;
// Values near zero (AR's M_S is -0.0012) are judged by absolute error too.
constexpr double kAbsTol = 1e-9;

struct Checker {
  int compared = 0;
  double worst = 0;
  void Check(double actual, double expected, const std::string& what) {
    ++compared;
    const double err = std::abs(actual - expected);
    const double rel = err / std::max(std::abs(expected), 1e-300);
    worst = std::max(worst, std::min(rel, err < kAbsTol ? 0.0 : rel));
    EXPECT_TRUE(rel <= kRelTol || err <= kAbsTol)
        << what << ": got " << actual << ", expected " << expected;
  }
};

double Num(simdjson::dom::element e) {
  double d = 0;
  if (e.get_double().get(d) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not a number in the reference JSON";
  }
  return d;
}

// step -> value, from the result JSON.
std::map<std::string, double> StepMap(simdjson::dom::element obj) {
  std::map<std::string, double> out;
  for (auto [key, value] : obj.get_object()) out[std::string(key)] = Num(value);
  return out;
}

class Osdi25GoldenTest : public testing::TestWithParam<std::string> {};

TEST_P(Osdi25GoldenTest, ReproducesPublishedResults) {
  const std::string name = GetParam();
  const std::string trace_path = kDataDir + "/trace-" + name + ".csv.gz";
  if (!std::filesystem::exists(trace_path)) {
    GTEST_SKIP() << "reference data not found at " << trace_path
                 << " (the golden test needs ../shared/data)";
  }
  auto bytes = ingest::ReadFileMaybeGz(trace_path);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto table = ingest::ParseOpsCsv(*bytes, trace_path);
  ASSERT_TRUE(table.ok()) << table.status().message();
  auto meta_text = ingest::ReadFile(kDataDir + "/meta-" + name + ".yaml");
  ASSERT_TRUE(meta_text.ok());
  auto meta = ingest::ParseJobMetaYaml(*meta_text, "meta");
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  auto prepared = whatif::PrepareTrace(*table, *meta);
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  auto analysis = whatif::Analyze(*prepared, {});
  ASSERT_TRUE(analysis.ok()) << analysis.status().message();
  const whatif::WhatIfResult& r = *analysis;

  simdjson::dom::parser parser;
  simdjson::dom::element result;
  ASSERT_EQ(parser.load(kDataDir + "/result-" + name + ".json").get(result),
            simdjson::SUCCESS);
  Checker c;
  std::map<std::string, size_t> step_index;
  for (size_t s = 0; s < r.steps.size(); ++s) {
    step_index[std::to_string(r.steps[s])] = s;
  }
  const std::pair<const char*, const std::vector<double>*> step_series[] = {
      {"step_t_base", &r.step_t_observed},
      {"step_t_nodelay", &r.step_t_replayed},
      {"step_t_noblk", &r.step_t_ideal},
      {"blocking_step_slowdown", &r.slowdown_per_step},
      {"launch_step_slowdown", &r.launch_slowdown_per_step}};
  for (const auto& [key, series] : step_series) {
    const auto expected = StepMap(result[key]);
    ASSERT_EQ(expected.size(), r.steps.size()) << key;
    for (const auto& [step, value] : expected) {
      ASSERT_TRUE(step_index.count(step)) << key << " step " << step;
      c.Check((*series)[step_index[step]], value,
              std::string(key) + "[" + step + "]");
    }
  }
  c.Check(r.slowdown, Num(result["blocking_slowdown"]), "blocking_slowdown");
  c.Check(r.launch_slowdown, Num(result["launch_slowdown"]), "launch_slowdown");
  const std::pair<const char*, const whatif::Decomposition*> decompositions[] =
      {{"optype", &r.by_optype},
       {"dp_rank", &r.by_dp_rank},
       {"stage", &r.by_stage}};
  for (const auto& [key, d] : decompositions) {
    const std::string field = std::string("blocking_decompose_by_") + key;
    const auto overall = StepMap(result[field]);
    EXPECT_EQ(overall.size(), d->keys.size()) << field;
    for (size_t g = 0; g < d->keys.size(); ++g) {
      ASSERT_TRUE(overall.count(d->keys[g])) << field << " " << d->keys[g];
      c.Check(d->slowdown[g], overall.at(d->keys[g]),
              field + "[" + d->keys[g] + "]");
    }
    for (auto [step, groups] : result[field + "_per_step"].get_object()) {
      const auto per = StepMap(groups);
      const size_t s = step_index.at(std::string(step));
      for (size_t g = 0; g < d->keys.size(); ++g) {
        c.Check(
            d->per_step[g][s], per.at(d->keys[g]),
            field + "_per_step[" + std::string(step) + "][" + d->keys[g] + "]");
      }
    }
  }
  for (const auto& [file, cf] : {std::pair{"mw", &r.fix_worst_workers},
                                 std::pair{"ms", &r.fix_last_stage}}) {
    simdjson::dom::parser p;
    simdjson::dom::element e;
    ASSERT_EQ(p.load(kDataDir + "/" + file + "-" + name + ".json").get(e),
              simdjson::SUCCESS);
    const std::string f = file;
    c.Check(cf->t_rem, Num(e["trem"]), f + ".trem");
    c.Check(cf->t_add, Num(e["tadd"]), f + ".tadd");
    c.Check(cf->t_ori, Num(e["tori"]), f + ".tori");
    c.Check(cf->t_ideal, Num(e["tideal"]), f + ".tideal");
    c.Check(cf->rem, Num(e["rem"]), f + ".rem");
    c.Check(cf->add, Num(e["add"]), f + ".add");
  }
  // The replay with the measured launch delays reproduces the trace (f32
  // timestamps of up to ~50 s have a resolution of ~4 us).
  EXPECT_LT(r.self_test_max_error_s, 1e-4);
  RecordProperty("values_compared", c.compared);
  std::printf("%s: %d values compared, worst relative error %.3g\n",
              name.c_str(), c.compared, c.worst);
}

INSTANTIATE_TEST_SUITE_P(Traces, Osdi25GoldenTest,
                         testing::Values("AR", "ST", "SE"));

}  // namespace
}  // namespace strag
