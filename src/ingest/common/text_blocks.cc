// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/text_blocks.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "base/huge_page_allocator.h"

namespace strag::ingest {
namespace {

// A fixed ring of reused text blocks, passed in order from one producer
// thread (filling) to one consumer thread (parsing). One mutex and one
// condition variable: both sides wait on the other only when the ring is
// full or empty, a few times per block at most. The blocks are one
// allocation, on huge pages when large (AllocateBig): 4 faults instead of
// 2,048 for four 2 MiB blocks, which cost the inflating thread ~5 ms on
// trace-AR.
class BlockRing {
 public:
  BlockRing(size_t blocks, size_t block_bytes)
      : buffer_(static_cast<char*>(AllocateBig(blocks * block_bytes)),
                BigFree{blocks * block_bytes}),
        sizes_(blocks, 0) {
    for (size_t i = 0; i < blocks; ++i) {
      blocks_.push_back(buffer_.get() + i * block_bytes);
    }
  }

  // Producer: the next block to fill, waiting while all are in use; null
  // once the consumer cancelled.
  char* NextFree() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] {
      return cancelled_ || published_ - released_ < blocks_.size();
    });
    return cancelled_ ? nullptr : blocks_[published_ % blocks_.size()];
  }
  // Producer: the block from NextFree now holds `size` bytes.
  void Publish(size_t size) {
    std::lock_guard lock(mutex_);
    sizes_[published_ % blocks_.size()] = size;
    ++published_;
    changed_.notify_all();
  }
  // Producer: no more blocks; `status` says why (ok: the text ended).
  void Close(Status status) {
    std::lock_guard lock(mutex_);
    closed_ = true;
    status_ = std::move(status);
    changed_.notify_all();
  }

  // Consumer: the next filled block, waiting for it; false once the ring is
  // closed and drained.
  bool NextFilled(std::string_view* block) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || released_ < published_; });
    if (released_ == published_) return false;
    const size_t i = released_ % blocks_.size();
    *block = std::string_view(blocks_[i], sizes_[i]);
    return true;
  }
  // Consumer: done with the block from NextFilled.
  void Release() {
    std::lock_guard lock(mutex_);
    ++released_;
    changed_.notify_all();
  }
  // Consumer: wants no more blocks (the producer stops at its next block).
  void Cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    changed_.notify_all();
  }
  // The producer's closing status; call after joining it.
  const Status& close_status() const { return status_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  struct BigFree {
    size_t bytes;
    void operator()(char* p) const { FreeBig(p, bytes); }
  };
  std::unique_ptr<char[], BigFree> buffer_;
  std::vector<char*> blocks_;
  std::vector<size_t> sizes_;
  uint64_t published_ = 0;  // blocks filled so far
  uint64_t released_ = 0;   // blocks consumed so far
  bool closed_ = false;
  bool cancelled_ = false;
  Status status_;
};

// The producer thread: fills blocks until the text ends or the reader
// fails, and always closes the ring, so the consumer never waits forever
// (an allocation failure too: no exception may leave a thread). The first
// blocks are filled only in part, kFirstBlockBytes then twice as much each
// time up to `block_bytes`: the consumer waits for the first block with
// nothing to do (on trace-AR, 8.8 MB of text in 2 MiB blocks, a tenth of
// the time).
void FillRing(TextReader* reader, size_t block_bytes, BlockRing* ring) {
  constexpr size_t kFirstBlockBytes = size_t{128} << 10;
  size_t fill = std::min(block_bytes, kFirstBlockBytes);
  try {
    while (true) {
      char* block = ring->NextFree();
      if (block == nullptr) {
        ring->Close(Status::Ok());
        return;
      }
      const Result<size_t> size = reader->Read(block, fill);
      fill = std::min(block_bytes, 2 * fill);
      if (!size.ok() || *size == 0) {
        ring->Close(size.ok() ? Status::Ok() : size.status());
        return;
      }
      ring->Publish(*size);
    }
  } catch (const std::bad_alloc&) {
    ring->Close(Internal("out of memory while inflating"));
  }
}

// After a sink error the consumer keeps releasing blocks without using them
// (see ForEachTextBlock), so the producer always runs to its end.
bool Refused(const Status& sink_status, const TextBlockOptions& options) {
  return !sink_status.ok() && options.sink_refused && options.sink_refused();
}

// A refusing sink error cancels the filler, whose close status (the state
// of blocks the sink never saw) then does not count.
Status ForEachBlockThreaded(TextReader* reader, size_t block_bytes,
                            const TextBlockOptions& options,
                            const TextSink& sink) {
  BlockRing ring(kTextRingBlocks, block_bytes);
  Status sink_status;
  bool refused = false;
  {
    const std::jthread filler(FillRing, reader, block_bytes, &ring);
    std::string_view block;
    try {
      while (ring.NextFilled(&block)) {
        if (sink_status.ok()) sink_status = sink(block);
        ring.Release();
        if (Refused(sink_status, options)) {
          refused = true;
          ring.Cancel();
          break;
        }
      }
    } catch (...) {  // the sink threw (std::bad_alloc): stop the filler
      ring.Cancel();
      throw;
    }
  }  // joins the filler, which has closed the ring
  if (refused) return sink_status;
  RETURN_IF_ERROR(ring.close_status());
  return sink_status;
}

Status ForEachBlock(TextReader* reader, size_t block_bytes,
                    const TextBlockOptions& options, const TextSink& sink) {
  const auto block = std::make_unique_for_overwrite<char[]>(block_bytes);
  Status sink_status;
  while (true) {
    ASSIGN_OR_RETURN(const size_t size, reader->Read(block.get(), block_bytes));
    if (size == 0) return sink_status;
    if (!sink_status.ok()) continue;  // only checking the gzip stream
    sink_status = sink(std::string_view(block.get(), size));
    if (!sink_status.ok() &&
        (!reader->is_gzip() || Refused(sink_status, options))) {
      return sink_status;
    }
  }
}

}  // namespace

Status ForEachTextBlock(TextReader* reader, const TextBlockOptions& options,
                        const TextSink& sink) {
  const size_t block_bytes = std::max<size_t>(options.block_bytes, 1);
  if (options.inflate_on_thread && reader->is_gzip()) {
    return ForEachBlockThreaded(reader, block_bytes, options, sink);
  }
  return ForEachBlock(reader, block_bytes, options, sink);
}

}  // namespace strag::ingest
