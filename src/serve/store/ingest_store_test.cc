// SPDX-License-Identifier: Apache-2.0
#include "serve/store/ingest_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "ingest/agent/agent_parser.h"
#include "serve/store/history.h"
#include "serve/store/schema.h"

namespace strag::serve {
namespace {

std::string TempDb(const char* name) {
  const std::string path = std::filesystem::temp_directory_path() /
                           (std::string(name) + "-" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return path;
}

std::string StepLine(int rank, int64_t seq, int64_t step) {
  return "{\"kind\":\"step\",\"job\":\"j\",\"rank\":" + std::to_string(rank) +
         ",\"epoch\":1,\"seq\":" + std::to_string(seq) +
         ",\"step\":" + std::to_string(step) +
         ",\"t_end_ns\":" + std::to_string(1'000'000'000 * step) +
         ",\"step_ns\":100000000,\"coll\":{\"dp\":[1000,1]}}\n";
}

ingest::agent::AgentBatch Parse(const std::string& body) {
  ingest::agent::AgentParser parser;
  Result<ingest::agent::AgentBatch> b = parser.Parse(body);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return std::move(b).value();
}

int64_t Count(const std::string& path, const char* sql) {
  Result<Db> db = OpenReaderDb(path);
  EXPECT_TRUE(db.ok());
  Result<Stmt> q = db->Prepare(sql);
  EXPECT_TRUE(q.ok());
  EXPECT_TRUE(q->Step().value());
  return q->Int(0);
}

TEST(IngestStore, StoresOnceAcrossRetriesAndRestarts) {
  const std::string path = TempDb("ingest-store");
  int64_t sunk = 0;
  {
    auto store = IngestStore::Open(path, {}, [&](const auto&, const auto& fresh,
                                                 const auto&) {
      for (uint8_t f : fresh) sunk += f;
    });
    ASSERT_TRUE(store.ok()) << store.status().message();
    WriteResult r = (*store)->Write(Parse(StepLine(0, 1, 1) + StepLine(0, 2, 2)));
    EXPECT_EQ(r.outcome, WriteOutcome::kStored);
    EXPECT_EQ(r.stored, 2);
    // A retry of the same batch plus one new record.
    r = (*store)->Write(
        Parse(StepLine(0, 1, 1) + StepLine(0, 2, 2) + StepLine(0, 3, 3)));
    EXPECT_EQ(r.stored, 1);
    EXPECT_EQ(r.duplicates, 2);
  }
  {
    // After a restart the streams come back from the database.
    auto store = IngestStore::Open(path, {}, nullptr);
    ASSERT_TRUE(store.ok());
    WriteResult r = (*store)->Write(Parse(StepLine(0, 3, 3) + StepLine(0, 6, 6)));
    EXPECT_EQ(r.stored, 1);
    EXPECT_EQ(r.duplicates, 1);
    EXPECT_EQ(r.lost_unexplained, 2);  // seq 4 and 5 never came
    StoreStats s = (*store)->Stats();
    EXPECT_EQ(s.records_stored, 1);
    EXPECT_GE(s.commits, 1);
  }
  EXPECT_EQ(sunk, 3);
  EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM steps"), 4);
  EXPECT_EQ(Count(path, "SELECT lost_unexplained FROM streams"), 2);
}

TEST(IngestStore, DropRecordsCountAsAgentLosses) {
  const std::string path = TempDb("ingest-drop");
  auto store = IngestStore::Open(path, {}, nullptr);
  ASSERT_TRUE(store.ok());
  const std::string drop =
      "{\"kind\":\"drop\",\"job\":\"j\",\"rank\":0,\"epoch\":1,\"seq\":5,"
      "\"first_seq\":2,\"last_seq\":5}\n";
  WriteResult r = (*store)->Write(Parse(StepLine(0, 1, 1) + drop + StepLine(0, 6, 6)));
  EXPECT_EQ(r.stored, 3);
  EXPECT_EQ(r.lost_dropped, 4);
  EXPECT_EQ(r.lost_unexplained, 0);
}

TEST(IngestStore, RefusesAFileThatIsNotADatabase) {
  const std::string path = TempDb("not-a-db");
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("hello, this is not SQLite\n", f);
  std::fclose(f);
  auto store = IngestStore::Open(path, {}, nullptr);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("not a strag database"),
            std::string::npos)
      << store.status().message();
}

TEST(History, ExportsStepsAsAnOpsCsv) {
  const std::string path = TempDb("history-export");
  {
    auto store = IngestStore::Open(path, {}, nullptr);
    ASSERT_TRUE(store.ok());
    (void)(*store)->Write(Parse(StepLine(0, 1, 1) + StepLine(1, 1, 1)));
  }
  Result<Db> db = OpenReaderDb(path);
  ASSERT_TRUE(db.ok());
  Result<std::string> csv = ExportOpsCsv(*db, "j", {});
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  EXPECT_NE(csv->find("1,0,1,1,forward-compute,0.9"), std::string::npos) << *csv;
  EXPECT_FALSE(ExportOpsCsv(*db, "nope", {}).ok());
  Result<std::vector<JobRow>> jobs = ListJobs(*db);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].ranks, 2);
}

TEST(History, RetentionDeletesOldRawStepsOnly) {
  const std::string path = TempDb("history-retention");
  {
    auto store = IngestStore::Open(path, {}, nullptr);
    ASSERT_TRUE(store.ok());
    std::string body;
    for (int64_t k = 1; k <= 10; ++k) body += StepLine(0, k, k);  // 1 s apart
    ASSERT_EQ((*store)->Write(Parse(body)).stored, 10);
    (*store)->Post([](Db& db) { return ApplyRetention(db, 3.5); });
  }  // the destructor commits what is queued
  // Steps 7..10 end within 3.5 s of the newest (step 10 at 10 s).
  EXPECT_EQ(Count(path, "SELECT COUNT(*) FROM steps"), 4);
  EXPECT_EQ(Count(path, "SELECT MIN(step) FROM steps"), 7);
  EXPECT_EQ(Count(path, "SELECT last_seq FROM streams"), 10);
}

}  // namespace
}  // namespace strag::serve
