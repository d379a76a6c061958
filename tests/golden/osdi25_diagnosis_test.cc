// SPDX-License-Identifier: Apache-2.0
// Diagnosis of the three published traces: AR is one faulty worker (rank 0,
// dp 0, stage 0), ST a heavy last stage, SE sequence-length imbalance with
// the stage imbalance second. Skips without ../shared/data.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "diagnose/diagnosis.h"
#include "ingest/common/file.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag {
namespace {

const std::string kDataDir = std::string(STRAG_SHARED_DATA_DIR) + "/osdi25-whatif";

struct Case {
  whatif::PreparedTrace trace;
  whatif::WhatIfResult result;
  diagnose::Diagnosis diagnosis;
};

bool Load(const std::string& name, Case* c) {
  const std::string path = kDataDir + "/trace-" + name + ".csv.gz";
  if (!std::filesystem::exists(path)) return false;
  auto table = ingest::ReadOpsCsvFile(path);
  EXPECT_TRUE(table.ok());
  auto meta = ingest::ParseJobMetaYaml(
      *ingest::ReadFile(kDataDir + "/meta-" + name + ".yaml"), "meta");
  EXPECT_TRUE(meta.ok());
  c->trace = std::move(whatif::PrepareTrace(*table, *meta).value());
  c->result = std::move(whatif::Analyze(c->trace, {}).value());
  c->diagnosis = diagnose::Diagnose(c->trace, c->result, {.tp = meta->tp});
  return true;
}

#define LOAD_OR_SKIP(name, c)                                             \
  if (!Load(name, &c)) GTEST_SKIP() << "reference data not found at " << kDataDir

TEST(Osdi25DiagnosisTest, ArIsOneFaultyWorker) {
  Case c;
  LOAD_OR_SKIP("AR", c);
  const diagnose::Diagnosis& d = c.diagnosis;
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.probable_cause, diagnose::Cause::kFaultyWorker) << d.findings[0].evidence;
  EXPECT_EQ(d.findings[0].ranks, std::vector<int32_t>{0});
  EXPECT_EQ(d.largest_straggler.rank, 0);
  EXPECT_EQ(d.largest_straggler.dp, 0);
  EXPECT_EQ(d.largest_straggler.pp, 0);
  EXPECT_TRUE(d.persistent);
}

TEST(Osdi25DiagnosisTest, StIsTheLastStage) {
  Case c;
  LOAD_OR_SKIP("ST", c);
  const diagnose::Diagnosis& d = c.diagnosis;
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.probable_cause, diagnose::Cause::kStageImbalance) << d.findings[0].evidence;
  for (int32_t rank : d.findings[0].ranks) {
    const auto w = std::find_if(c.trace.workers.begin(), c.trace.workers.end(),
                                [&](const whatif::Worker& x) { return x.rank == rank; });
    EXPECT_EQ(w->pp, c.trace.pp - 1);
  }
}

TEST(Osdi25DiagnosisTest, SeIsSequenceLengthsThenStage) {
  Case c;
  LOAD_OR_SKIP("SE", c);
  const diagnose::Diagnosis& d = c.diagnosis;
  ASSERT_GE(d.findings.size(), 2u);
  EXPECT_EQ(d.findings[0].cause, diagnose::Cause::kSequenceLengthImbalance)
      << d.findings[0].evidence;
  EXPECT_EQ(d.findings[1].cause, diagnose::Cause::kStageImbalance)
      << d.findings[1].evidence;
}

}  // namespace
}  // namespace strag
