// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/parallel_gzip_writer.h"

#include <algorithm>
#include <utility>

#include "ingest/common/gzip.h"

namespace strag::ingest {

ParallelGzipWriter::ParallelGzipWriter(Sink sink, Options options)
    : sink_(std::move(sink)), chunk_bytes_(std::max<size_t>(options.chunk_bytes, 1)) {
  const int threads =
      options.threads > 0
          ? options.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Two more chunks than workers: one being filled by the producer's next
  // round and one waiting to be written, so that no worker idles.
  slots_.resize(static_cast<size_t>(threads) + 2);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

ParallelGzipWriter::~ParallelGzipWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ParallelGzipWriter::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_.wait(lock, [&] { return stop_ || taken_ < submitted_; });
    if (stop_) return;
    Slot& slot = slots_[taken_++ % slots_.size()];
    lock.unlock();
    // The slot is this worker's alone until it is marked done: the producer
    // only touches done or free slots.
    Status status = GzipCompressFast(slot.text, &slot.gz);
    // Each member says its size: readers may step over members (e.g. the
    // processes of one analysis, each inflating only its own).
    if (status.ok() && !AddMemberSize(&slot.gz)) {
      status = Internal("ParallelGzipWriter: unexpected gzip header");
    }
    lock.lock();
    slot.status = std::move(status);
    slot.state = State::kDone;
    done_.notify_all();
  }
}

Result<bool> ParallelGzipWriter::WriteOldest(bool wait) {
  Slot& slot = slots_[written_ % slots_.size()];
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wait) {
      done_.wait(lock, [&] { return slot.state == State::kDone; });
    } else if (slot.state != State::kDone) {
      return false;
    }
  }
  // Done slots belong to the producer (this thread).
  Status status = std::move(slot.status);
  if (status.ok()) status = sink_(slot.gz);
  compressed_bytes_ += static_cast<int64_t>(slot.gz.size());
  slot.state = State::kFree;
  ++written_;
  if (!status.ok()) {
    status_ = status;
    return status;
  }
  return true;
}

Status ParallelGzipWriter::Submit() {
  RETURN_IF_ERROR(status_);
  // The ring is full: the oldest member must leave before this one enters.
  if (submitted_ - written_ == slots_.size()) {
    RETURN_IF_ERROR(WriteOldest(/*wait=*/true).status());
  }
  Slot& slot = slots_[submitted_ % slots_.size()];
  text_bytes_ += static_cast<int64_t>(text_.size());
  // The slot's old text buffer becomes the next one to fill: no allocation.
  std::swap(slot.text, text_);
  text_.clear();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slot.state = State::kPending;
    ++submitted_;
  }
  work_.notify_one();
  // Members already compressed leave now, keeping the sink busy.
  while (written_ < submitted_) {
    ASSIGN_OR_RETURN(const bool wrote, WriteOldest(/*wait=*/false));
    if (!wrote) break;
  }
  return Status::Ok();
}

Status ParallelGzipWriter::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t room = chunk_bytes_ - std::min(chunk_bytes_, text_.size());
    const size_t n = std::min(room, bytes.size());
    text_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    RETURN_IF_ERROR(MaybeSubmit());
  }
  return Status::Ok();
}

Status ParallelGzipWriter::Finish() {
  RETURN_IF_ERROR(status_);
  if (!text_.empty() || submitted_ == 0) RETURN_IF_ERROR(Submit());
  while (written_ < submitted_) {
    RETURN_IF_ERROR(WriteOldest(/*wait=*/true).status());
  }
  return Status::Ok();
}

}  // namespace strag::ingest
