// SPDX-License-Identifier: Apache-2.0
#include "load/step_sorter.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <queue>
#include <unistd.h>
#include <utility>

namespace strag::load {
namespace {

// Rows read from a run at a time while merging.
constexpr size_t kCursorRows = 8192;
// Rows handed to the sink at a time.
constexpr size_t kBatchRows = size_t{1} << 16;

void AppendRow(const StepSorter::Row& r, trace::OpsTable* t) {
  t->step.push_back(r.step);
  t->start_ns.push_back(r.start_ns);
  t->dur_ns.push_back(r.dur_ns);
  t->start_rem_as.push_back(r.start_rem_as);
  t->start_s32.push_back(r.start_s32);
  t->dur_s32.push_back(r.dur_s32);
  t->rank.push_back(r.rank);
  t->dp.push_back(r.dp);
  t->pp.push_back(r.pp);
  t->seq_id.push_back(r.seq_id);
  t->chunk.push_back(r.chunk);
  t->microbatch.push_back(r.microbatch);
  t->global_chunk.push_back(r.global_chunk);
  t->op_type.push_back(r.op_type);
}

void ClearRows(trace::OpsTable* t) { *t = trace::OpsTable(); }

}  // namespace

StepSorter::StepSorter(std::string spill_dir, size_t run_rows)
    : spill_dir_(std::move(spill_dir)),
      run_rows_(std::max<size_t>(run_rows, 1)),
      file_(nullptr, &std::fclose) {}

Status StepSorter::Add(const trace::OpsTable& rows) {
  const bool s32 = rows.has_s32_times();
  for (size_t r = 0; r < rows.size(); ++r) {
    buffer_.push_back(Row{
        .step = rows.step[r],
        .start_ns = rows.start_ns[r],
        .dur_ns = rows.dur_ns[r],
        .start_rem_as = rows.start_rem_as.empty() ? 0 : rows.start_rem_as[r],
        .start_s32 = s32 ? rows.start_s32[r] : 0.0f,
        .dur_s32 = s32 ? rows.dur_s32[r] : 0.0f,
        .rank = rows.rank[r],
        .dp = rows.dp[r],
        .pp = rows.pp[r],
        .seq_id = rows.seq_id[r],
        .chunk = rows.chunk[r],
        .microbatch = rows.microbatch[r],
        .global_chunk = rows.global_chunk[r],
        .op_type = rows.op_type[r]});
    if (buffer_.size() >= run_rows_) RETURN_IF_ERROR(WriteRun());
  }
  return Status::Ok();
}

Status StepSorter::WriteRun() {
  if (buffer_.empty()) return Status::Ok();
  if (file_ == nullptr) {
    std::string path = spill_dir_ + "/strag-sort-XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0) {
      return InvalidInput(spill_dir_ + ": cannot create a spill file there: " +
                          std::strerror(errno) + " (--spill-dir to change)");
    }
    unlink(path.c_str());
    file_.reset(fdopen(fd, "w+b"));
    if (file_ == nullptr) {
      close(fd);
      return Internal("cannot open the sort file");
    }
  }
  std::stable_sort(buffer_.begin(), buffer_.end(),
                   [](const Row& a, const Row& b) { return a.step < b.step; });
  const size_t bytes = buffer_.size() * sizeof(Row);
  if (std::fwrite(buffer_.data(), 1, bytes, file_.get()) != bytes) {
    return Internal(spill_dir_ + ": cannot write the sort file: " +
                    std::strerror(errno));
  }
  runs_.emplace_back(rows_written_, buffer_.size());
  rows_written_ += buffer_.size();
  spilled_bytes_ += bytes;
  buffer_.clear();
  return Status::Ok();
}

// A k-way merge of the runs by (step, run): runs hold consecutive input
// rows, so ties keep the input order.
Status StepSorter::Merge(
    const std::function<Status(const trace::OpsTable&)>& sink) {
  trace::OpsTable batch;
  if (runs_.empty()) {  // everything fits one run: no file at all
    std::stable_sort(
        buffer_.begin(), buffer_.end(),
        [](const Row& a, const Row& b) { return a.step < b.step; });
    for (const Row& r : buffer_) {
      AppendRow(r, &batch);
      if (batch.size() >= kBatchRows) {
        RETURN_IF_ERROR(sink(batch));
        ClearRows(&batch);
      }
    }
    buffer_ = {};
    return batch.size() > 0 ? sink(batch) : Status::Ok();
  }
  RETURN_IF_ERROR(WriteRun());
  buffer_ = {};
  struct Cursor {
    uint64_t next = 0, end = 0;  // rows of the run not yet read
    std::vector<Row> rows;
    size_t at = 0;
  };
  std::vector<Cursor> cursors(runs_.size());
  const auto refill = [&](Cursor* c) -> Status {
    const uint64_t n = std::min<uint64_t>(kCursorRows, c->end - c->next);
    c->rows.resize(n);
    c->at = 0;
    if (n == 0) return Status::Ok();
    if (fseeko(file_.get(), static_cast<off_t>(c->next * sizeof(Row)),
               SEEK_SET) != 0 ||
        std::fread(c->rows.data(), sizeof(Row), n, file_.get()) != n) {
      return Internal(spill_dir_ + ": cannot read the sort file back");
    }
    c->next += n;
    return Status::Ok();
  };
  using Key = std::pair<int64_t, size_t>;  // step, run
  std::priority_queue<Key, std::vector<Key>, std::greater<>> heap;
  for (size_t k = 0; k < runs_.size(); ++k) {
    cursors[k].next = runs_[k].first;
    cursors[k].end = runs_[k].first + runs_[k].second;
    RETURN_IF_ERROR(refill(&cursors[k]));
    if (!cursors[k].rows.empty()) heap.emplace(cursors[k].rows[0].step, k);
  }
  while (!heap.empty()) {
    const size_t k = heap.top().second;
    heap.pop();
    Cursor& c = cursors[k];
    // Every row of this run at this step goes at once.
    const int64_t step = c.rows[c.at].step;
    while (true) {
      AppendRow(c.rows[c.at], &batch);
      if (++c.at == c.rows.size()) RETURN_IF_ERROR(refill(&c));
      if (c.rows.empty() || c.rows[c.at].step != step) break;
    }
    if (!c.rows.empty()) heap.emplace(c.rows[c.at].step, k);
    if (batch.size() >= kBatchRows) {
      RETURN_IF_ERROR(sink(batch));
      ClearRows(&batch);
    }
  }
  return batch.size() > 0 ? sink(batch) : Status::Ok();
}

}  // namespace strag::load
