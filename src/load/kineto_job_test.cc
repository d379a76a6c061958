// SPDX-License-Identifier: Apache-2.0
// ReadKinetoJob on threads (base/thread_collective.h), each reading its
// share of the files, against one process reading them all: the same
// prepared arrays and the same notes (a bad file's warning included), for
// 2 to 7 processes (more processes than files: some read none).

#include "load/kineto_job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "base/thread_collective.h"
#include "ingest/kineto/kineto_test_util.h"

namespace strag::load {
namespace {

template <typename A, typename B>
void ExpectSameValues(const A& a, const B& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k], b[k]) << what << " [" << k << "]";
  }
}

void ExpectSameInput(const report::ReportInput& a,
                     const report::ReportInput& b) {
  ExpectSameValues(a.prepared.steps, b.prepared.steps, "steps");
  ExpectSameValues(a.prepared.worker_rank, b.prepared.worker_rank,
                   "worker_rank");
  ExpectSameValues(a.prepared.start, b.prepared.start, "start");
  ExpectSameValues(a.prepared.launch_delay, b.prepared.launch_delay,
                   "launch_delay");
  ExpectSameValues(a.prepared.cost, b.prepared.cost, "cost");
  ExpectSameValues(a.prepared.step_t_base, b.prepared.step_t_base,
                   "step_t_base");
  EXPECT_EQ(a.coverage, b.coverage);
  ASSERT_TRUE(a.notes.has_value());
  ASSERT_TRUE(b.notes.has_value());
  EXPECT_EQ(a.notes->files, b.notes->files);
  EXPECT_EQ(a.notes->events, b.notes->events);
  EXPECT_EQ(a.notes->warnings, b.notes->warnings);
  EXPECT_EQ(a.notes->skipped, b.notes->skipped);
  EXPECT_EQ(a.notes->layout, b.notes->layout);
}

TEST(ReadKinetoJobTest, SharesOfTheFilesGiveWhatOneProcessReads) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("strag-kineto-job-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  constexpr int kRanks = 5;
  for (int rank = 0; rank < kRanks; ++rank) {
    std::ofstream(dir / ("rank-" + std::to_string(rank) + ".json"))
        << ingest::kineto::SyntheticKinetoTrace(
               {.rank = rank, .world_size = kRanks, .steps = 3});
  }
  // A file that cannot be read: a warning, the same from every process.
  std::ofstream(dir / "rank-9.json") << "{\"traceEvents\": [ {\"ph\": ";
  const std::vector<std::string> paths = {dir.string()};
  const report::ProfilerInputOptions options{.source = dir.string()};

  Result<report::ReportInput> one = ReadKinetoJob(paths, 2, options);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_EQ(one->notes->files, kRanks);
  ASSERT_EQ(one->notes->warnings.empty(), false);

  for (size_t processes : {2, 3, 4, 7}) {
    std::mutex mu;
    std::vector<Result<report::ReportInput>> got(
        processes, Result<report::ReportInput>(Internal("not run")));
    ThreadCollective::Run(processes, [&](Collective& c) {
      Result<report::ReportInput> in = ReadKinetoJob(paths, 1, options, {}, &c);
      const std::lock_guard<std::mutex> lock(mu);
      got[c.rank()] = std::move(in);
    });
    for (size_t p = 0; p < processes; ++p) {
      SCOPED_TRACE(std::to_string(processes) + " processes, process " +
                   std::to_string(p));
      ASSERT_TRUE(got[p].ok()) << got[p].status().message();
      ExpectSameInput(*one, *got[p]);
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strag::load
