// SPDX-License-Identifier: Apache-2.0
// ParallelGzipWriter: text in, a multi-member gzip stream out, compressed
// on several threads (pure: the bytes go to a sink the caller gives; no file
// I/O here).
//
// The text is cut into chunks of about `chunk_bytes`; each chunk becomes one
// independent gzip member (RFC 1952 allows any number back to back: gzip -d,
// zcat, pigz and strag's own readers inflate them one after the other into the
// one text). Each member says its size in its header (AddMemberSize in gzip.h),
// so a reader can step from member to member without inflating; a caller that
// cuts its text at line ends (text() and MaybeSubmit() after whole lines, as
// `strag simulate` does) gets members of whole lines, which processes can
// share. Members are compressed by worker threads and handed to the sink in the
// order of the text. Memory is bounded: at most `threads + 2` chunks (text and
// compressed) are in flight; the producer waits for the oldest when all are
// taken. Chunk buffers are reused, so a long stream allocates nothing once
// warm.
//
// Compression is ISA-L's igzip level 1 where the build has it (4-5 times
// zlib level 1's speed at a slightly better ratio on ops CSV text), else
// zlib level 1 (see GzipCompressFast).

#ifndef STRAG_SRC_INGEST_COMMON_PARALLEL_GZIP_WRITER_H_
#define STRAG_SRC_INGEST_COMMON_PARALLEL_GZIP_WRITER_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"

namespace strag::ingest {

class ParallelGzipWriter {
 public:
  // Receives the compressed stream in order; an error stops the writer and
  // is returned by the next call.
  using Sink = std::function<Status(std::string_view bytes)>;

  struct Options {
    size_t chunk_bytes = size_t{8} << 20;
    int threads = 0;  // compressing threads; 0: the hardware's
  };

  explicit ParallelGzipWriter(Sink sink) : ParallelGzipWriter(sink, {}) {}
  ParallelGzipWriter(Sink sink, Options options);
  ParallelGzipWriter(const ParallelGzipWriter&) = delete;
  ParallelGzipWriter& operator=(const ParallelGzipWriter&) = delete;
  // Stops the workers; text not yet Finish()ed is dropped.
  ~ParallelGzipWriter();

  // The buffer the caller appends text to (no copy); call MaybeSubmit()
  // after appending so that it is handed on once a chunk is full.
  std::string* text() { return &text_; }
  Status MaybeSubmit() {
    return text_.size() >= chunk_bytes_ ? Submit() : Status::Ok();
  }
  // Appends `bytes` (any size), submitting whole chunks as they fill.
  Status Append(std::string_view bytes);
  // Compresses what is left, hands every member to the sink and stops the
  // workers. An empty stream is written as one empty member (a valid gzip).
  Status Finish();

  int64_t text_bytes() const { return text_bytes_; }
  int64_t compressed_bytes() const { return compressed_bytes_; }

 private:
  enum class State : uint8_t { kFree, kPending, kDone };
  struct Slot {
    std::string text, gz;
    State state = State::kFree;
    Status status;
  };

  Status Submit();
  // Hands the oldest member to the sink, waiting for it when `wait`.
  // Returns false (and does nothing) when it is not done and !wait.
  Result<bool> WriteOldest(bool wait);
  void Work();

  Sink sink_;
  size_t chunk_bytes_;
  std::string text_;
  std::vector<Slot> slots_;  // ring: member i is slots_[i % size]
  uint64_t submitted_ = 0;   // members handed to the workers
  uint64_t taken_ = 0;       // members a worker has started
  uint64_t written_ = 0;     // members handed to the sink
  Status status_;
  int64_t text_bytes_ = 0, compressed_bytes_ = 0;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable work_, done_;
  std::vector<std::thread> workers_;
};

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_PARALLEL_GZIP_WRITER_H_
