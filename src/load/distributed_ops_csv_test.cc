// SPDX-License-Identifier: Apache-2.0
// DistributeOpsCsv on threads (base/thread_collective.h) against one
// process's StreamOpsCsv: the same analysis, bit for bit, for 1 to 4
// processes, chunks of a few KiB, plain and gzip files, rows by step and
// rank by rank; and every process giving up together where one cannot
// vouch for its chunks (a quoted line break, a bad row).

#include "load/distributed_ops_csv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "base/thread_collective.h"
#include "ingest/common/gzip.h"
#include "ingest/common/parallel_gzip_writer.h"
#include "ingest/ops_csv/ops_csv_writer.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"
#include "whatif/result_compare_test_util.h"

namespace strag::load {
namespace {

constexpr std::string_view kSpec = R"(
job: {dp: 4, pp: 2, tp: 2, microbatches: 4, steps: 9, gpus_per_node: 4}
compute: {forward_ms: 10, backward_ms: 20, noise: {dist: lognormal, sigma: 0.05}}
comm: {p2p_ms: 0.5, dp_allgather_ms: 3, dp_reducescatter_ms: 4,
       noise: {dist: lognormal, sigma: 0.05}}
stragglers:
  - {kind: slow_worker, rank: 5, factor: 1.5, steps: [3, 6]}
  - {kind: gc_pause, ranks: all, rate_per_step: 0.2, pause_ms: 30}
)";

constexpr size_t kChunkBytes = 4096;
constexpr size_t kWindowOps = 300;

class DistributeOpsCsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = sim::ParseJobSpec(kSpec, "test.yaml");
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    auto job = sim::Simulate(*spec, {.truth = false});
    ASSERT_TRUE(job.ok()) << job.status().message();
    meta_ = sim::MetaOf(*job);
    table_ = sim::ToOpsTable(*job, 0, job->spec.job.steps - 1);
    dir_ = std::filesystem::temp_directory_path() /
           ("strag-distributed-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The CSV text of the table, its rows in `order` (default: as is).
  std::string Csv(const std::vector<size_t>& order = {}) const {
    if (order.empty()) return ingest::WriteOpsCsv(table_);
    trace::OpsTable t;
    for (const trace::ExtraColumn& e : table_.extra) {
      t.extra.emplace_back(e.name);
    }
    for (size_t r : order) t.AppendRows(table_, r, r + 1);
    return ingest::WriteOpsCsv(t);
  }
  std::string Write(const std::string& name, const std::string& text,
                    bool gzip) const {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    if (gzip) {
      auto gz = ingest::GzipCompress(text);
      EXPECT_TRUE(gz.ok());
      out << *gz;
    } else {
      out << text;
    }
    return path;
  }

  // One process's windowed analysis of `path`.
  whatif::WhatIfResult Alone(const std::string& path) const {
    auto job = StreamOpsCsv(
        path, meta_, {.window_ops = kWindowOps, .spill_dir = dir_.string()});
    EXPECT_TRUE(job.ok()) << job.status().message();
    whatif::WhatIfOptions options;
    options.threads = 1;
    auto r = whatif::AnalyzeWindows(job->shape, job->windows.get(), options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  }

  // What each of k processes gets: its result, or its status; and whether
  // it gave up (nullopt).
  struct Outcome {
    Status status = Status::Ok();
    bool gave_up = false;
    std::string read_by;
    whatif::WhatIfResult result;
  };
  std::vector<Outcome> Shared(const std::string& path, size_t k,
                              uint64_t max_line_bytes = 1 << 20) const {
    std::vector<Outcome> out(k);
    ThreadCollective::Run(k, [&](Collective& c) {
      Outcome& mine = out[c.rank()];
      auto job =
          DistributeOpsCsv(path, meta_,
                           {.window_ops = kWindowOps,
                            .threads = 1,
                            .limits = {.max_line_bytes = max_line_bytes}},
                           &c, kChunkBytes);
      if (!job.ok()) {
        mine.status = job.status();
        return;
      }
      if (!*job) {
        mine.gave_up = true;
        return;
      }
      mine.read_by = (*job)->read_by;
      whatif::WhatIfOptions options;
      options.threads = 1;
      options.collective = &c;
      auto r =
          whatif::AnalyzeWindows((*job)->shape, (*job)->windows.get(), options);
      if (!r.ok()) {
        mine.status = r.status();
        return;
      }
      mine.result = std::move(r).value();
    });
    return out;
  }

  void ExpectSameAsAlone(const std::string& path, const std::string& read_by) {
    const whatif::WhatIfResult expected = Alone(path);
    for (size_t k = 1; k <= 4; ++k) {
      SCOPED_TRACE(path + ", " + std::to_string(k) + " processes");
      for (const Outcome& o : Shared(path, k)) {
        ASSERT_TRUE(o.status.ok()) << o.status.message();
        ASSERT_FALSE(o.gave_up);
        EXPECT_EQ(o.read_by, read_by);
        whatif::ExpectSameResult(o.result, expected);
      }
    }
  }

  trace::JobMeta meta_;
  trace::OpsTable table_;
  std::filesystem::path dir_;
};

TEST_F(DistributeOpsCsvTest, RowsByStepPlainAndGzip) {
  const std::string csv = Csv();
  ASSERT_GT(csv.size(), 10 * kChunkBytes);
  ExpectSameAsAlone(Write("by-step.csv", csv, false), "byte ranges");
  ExpectSameAsAlone(Write("by-step.csv.gz", csv, true),
                    "the whole gzip stream");
}

// Members that say their size (what `strag simulate` writes): each
// process inflates only its members. Cut at line ends they are shared;
// a member ending inside a line makes everyone give up.
TEST_F(DistributeOpsCsvTest, GzipMembersThatSayTheirSize) {
  const std::string csv = Csv();
  for (bool at_line_ends : {true, false}) {
    std::string gz;
    ingest::ParallelGzipWriter writer(
        [&gz](std::string_view bytes) {
          gz.append(bytes);
          return Status::Ok();
        },
        {.chunk_bytes = kChunkBytes, .threads = 2});
    if (at_line_ends) {
      for (size_t at = 0; at < csv.size();) {
        const size_t end = csv.find('\n', at) + 1;
        writer.text()->append(csv, at, end - at);
        ASSERT_TRUE(writer.MaybeSubmit().ok());
        at = end;
      }
    } else {
      ASSERT_TRUE(writer.Append(csv).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
    ASSERT_GT(ingest::SizedMemberBytes(gz), 0u);
    const std::string path = Write("members.csv.gz", gz, false);
    if (at_line_ends) {
      ExpectSameAsAlone(path, "gzip members");
    } else {
      for (const Outcome& o : Shared(path, 3)) {
        EXPECT_TRUE(o.status.ok()) << o.status.message();
        EXPECT_TRUE(o.gave_up);
      }
    }
  }
}

TEST_F(DistributeOpsCsvTest, RowsRankByRank) {
  std::vector<size_t> order(table_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return table_.rank[a] < table_.rank[b];
  });
  const std::string csv = Csv(order);
  ExpectSameAsAlone(Write("by-rank.csv", csv, false), "byte ranges");
  ExpectSameAsAlone(Write("by-rank.csv.gz", csv, true),
                    "the whole gzip stream");
}

// Windows held in memory (StreamOptions::hold) are the spilled ones; rows
// out of step order without the sort give no windows (the caller reads the
// file whole), and with it the same windows.
TEST_F(DistributeOpsCsvTest, HeldWindowsAreTheSpilledOnes) {
  std::vector<size_t> by_rank(table_.size());
  std::iota(by_rank.begin(), by_rank.end(), size_t{0});
  std::stable_sort(by_rank.begin(), by_rank.end(), [&](size_t a, size_t b) {
    return table_.rank[a] < table_.rank[b];
  });
  whatif::WhatIfOptions options;
  options.threads = 1;
  for (bool gzip : {false, true}) {
    for (bool step_by_step : {true, false}) {
      const std::string path =
          Write(std::string(step_by_step ? "by-step" : "by-rank") +
                    (gzip ? ".csv.gz" : ".csv"),
                step_by_step ? Csv() : Csv(by_rank), gzip);
      SCOPED_TRACE(path);
      const whatif::WhatIfResult expected = Alone(path);
      for (bool sort : {false, true}) {
        auto job = StreamOpsCsv(path, meta_,
                                {.window_ops = kWindowOps,
                                 .spill_dir = dir_.string(),
                                 .hold = true,
                                 .sort = sort});
        ASSERT_TRUE(job.ok()) << job.status().message();
        if (!step_by_step && !sort) {
          EXPECT_EQ(job->windows, nullptr);
          continue;
        }
        ASSERT_NE(job->windows, nullptr);
        EXPECT_GE(job->num_windows, 2u);
        EXPECT_EQ(job->spill_bytes, 0u);
        auto r =
            whatif::AnalyzeWindows(job->shape, job->windows.get(), options);
        ASSERT_TRUE(r.ok()) << r.status().message();
        whatif::ExpectSameResult(*r, expected);
      }
    }
  }
}

// The text with a column added: `value(line)` for each row.
std::string WithNote(const std::string& csv,
                     const std::function<std::string(size_t)>& value) {
  std::string out;
  size_t line = 0, at = 0;
  while (at < csv.size()) {
    const size_t end = csv.find('\n', at);
    out += csv.substr(at, end - at);
    out += ',';
    out += line == 0 ? std::string("note") : value(line);
    out += '\n';
    at = end + 1;
    ++line;
  }
  return out;
}

TEST_F(DistributeOpsCsvTest, QuotedLineBreakMakesEveryProcessGiveUp) {
  const std::string csv = Csv();
  const size_t lines =
      static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n'));
  for (size_t at : {size_t{2}, lines / 2, lines - 1}) {
    const std::string text = WithNote(csv, [&](size_t line) {
      return line == at ? std::string("\"two\nlines\"")
                        : std::string("\"a,b\"");
    });
    for (bool gzip : {false, true}) {
      const std::string path = Write("quoted.csv", text, gzip);
      for (size_t k : {2, 3}) {
        for (const Outcome& o : Shared(path, k)) {
          EXPECT_TRUE(o.status.ok()) << o.status.message();
          EXPECT_TRUE(o.gave_up) << "line " << at << ", " << k;
        }
      }
    }
  }
  // Quotes without line breaks are shared as usual.
  const std::string quoted =
      WithNote(csv, [](size_t) { return "\"a,b\"\"c\""; });
  ExpectSameAsAlone(Write("quoted-fine.csv", quoted, false), "byte ranges");
}

TEST_F(DistributeOpsCsvTest, BadRowMakesEveryProcessGiveUp) {
  std::string csv = Csv();
  const size_t line_start = csv.find('\n', csv.size() * 2 / 3) + 1;
  std::string bad = csv.substr(0, line_start);
  bad += 'x';  // "x0,...": not a dp rank
  bad.append(csv, line_start);
  csv.swap(bad);
  const std::string path = Write("bad.csv", csv, false);
  for (size_t k : {2, 4}) {
    for (const Outcome& o : Shared(path, k)) {
      EXPECT_TRUE(o.status.ok()) << o.status.message();
      EXPECT_TRUE(o.gave_up);
    }
  }
}

// A line over the limit (here 1000 bytes: a junk line of 100 KB, without
// its line end, halfway through) is left to the one-process reader to
// refuse with its line: every process gives up, plain or gzip.
TEST_F(DistributeOpsCsvTest, ALineOverTheLimitGivesUp) {
  std::string csv = Csv();
  const size_t line_start = csv.find('\n', csv.size() / 2) + 1;
  std::string bad = csv.substr(0, line_start);
  bad.append(100000, '7');
  bad.append(csv, line_start);
  for (bool gzip : {false, true}) {
    const std::string path = Write("long-line.csv", bad, gzip);
    for (const Outcome& o : Shared(path, 2, /*max_line_bytes=*/1000)) {
      EXPECT_TRUE(o.status.ok()) << o.status.message();
      EXPECT_TRUE(o.gave_up) << gzip;
    }
  }
}

// More processes than steps: every process gives up sharing and reads the
// file alone (as in memory, where each analyses the whole job).
TEST_F(DistributeOpsCsvTest, MoreProcessesThanSteps) {
  const std::string path = Write("few.csv", Csv(), false);
  for (const Outcome& o : Shared(path, 12)) {
    EXPECT_TRUE(o.status.ok()) << o.status.message();
    EXPECT_TRUE(o.gave_up);
  }
}

}  // namespace
}  // namespace strag::load
