// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/text_reader.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "ingest/common/gzip.h"

namespace strag::ingest {
namespace {

// At least this much of the file is read at a time, so that a gzip magic
// (2 bytes) can always be told, even across reads.
constexpr size_t kMinInputBytes = 64;
// Deflate cannot expand more than ~1032:1.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kMinGzipMemberBytes = 18;
// Gzip files from this size are sampled for their text size
// (SetGzipSizeHint).
constexpr uint64_t kSampledGzipBytes = uint64_t{8} << 20;

}  // namespace

TextReader::TextReader(InputFile file, size_t block_bytes)
    : file_(std::move(file)),
      in_capacity_(std::max(block_bytes, kMinInputBytes)),
      in_(std::make_unique_for_overwrite<char[]>(in_capacity_)) {}

Result<std::unique_ptr<TextReader>> TextReader::Open(const std::string& path,
                                                     size_t block_bytes,
                                                     GzipEngine engine) {
  ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path));
  std::unique_ptr<TextReader> reader(
      new TextReader(std::move(file), block_bytes));
  RETURN_IF_ERROR(reader->Refill());
  if (IsGzip(std::string_view(reader->in_.get(), reader->in_end_))) {
    reader->gunzip_ = std::make_unique<GunzipStream>(path, engine);
    reader->SetGzipSizeHint(engine);
  } else {
    reader->text_bytes_hint_ = reader->file_.size_bytes();
  }
  return reader;
}

// The trailer's ISIZE is exact for one member under 4 GiB; several members
// or a larger text make it too small (the last member's size, modulo 2^32)
// and damage makes it anything. So it is checked against the file's size
// scaled by the ratio of its first bytes (SampledGzipTextBytes): taken when
// plausible and at least a quarter of that estimate (the ratio varies along
// a file), else the estimate. Too small a hint costs column growth: a copy
// of every column and a second first touch of their pages (a multi-member
// llama-16k `.csv.gz` read whole took 1.5 s against 0.86 s for its `.csv`
// before the estimate, 0.74-0.97 s after). Files under kSampledGzipBytes
// with a plausible ISIZE are not sampled: their columns are small enough
// to grow (per-rank Kineto files, 2-6% of whose reading went to the sample).
void TextReader::SetGzipSizeHint(GzipEngine engine) {
  const uint64_t gz_bytes = file_.size_bytes();
  if (gz_bytes < kMinGzipMemberBytes) return;
  char tail[4];
  const Result<size_t> got = file_.ReadAt(gz_bytes - 4, tail, sizeof(tail));
  const uint64_t isize = got.ok() && *got == sizeof(tail)
                             ? GzipTrailerIsize(std::string_view(tail, 4))
                             : 0;
  const bool plausible =
      isize >= gz_bytes && isize <= kMaxDeflateRatio * gz_bytes;
  if (plausible && gz_bytes < kSampledGzipBytes) {
    text_bytes_hint_ = isize;
    return;
  }
  bool exact = false;
  const uint64_t estimate = SampledGzipTextBytes(
      std::string_view(in_.get() + in_begin_, in_end_ - in_begin_), file_ended_,
      gz_bytes, engine, &exact);
  text_bytes_hint_ =
      !exact && plausible && isize >= estimate / 4 ? isize : estimate;
}

// The text size of a gzip file of `gz_bytes` bytes starting with `first`
// (all of it when `is_all`), estimated from the text its first bytes
// inflate to, with a quarter more for the variation of the ratio along the
// file (a guess above the text costs only address space: reserved pages
// are not touched); exact (`*exact` set) when the sample is the whole
// stream; 0 when the sample says nothing (damage is the reading's to
// report, not this). 64 KiB of text: ~0.05 ms of inflating per file.
uint64_t TextReader::SampledGzipTextBytes(std::string_view first, bool is_all,
                                          uint64_t gz_bytes, GzipEngine engine,
                                          bool* exact) {
  constexpr size_t kSampleTextBytes = size_t{64} << 10;
  constexpr size_t kMinSampleBytes = size_t{2} << 10;
  GunzipStream sample("sample", engine);
  std::vector<char> text(kSampleTextBytes);
  const Result<GunzipStream::Progress> progress =
      sample.Inflate(first, is_all, text.data(), text.size());
  if (!progress.ok() || progress->out_bytes == 0) return 0;
  if (sample.done() && is_all && progress->in_bytes == first.size()) {
    *exact = true;  // the whole stream
    return progress->out_bytes;
  }
  if (progress->in_bytes < kMinSampleBytes) return 0;
  const double ratio = static_cast<double>(progress->out_bytes) /
                       static_cast<double>(progress->in_bytes);
  return static_cast<uint64_t>(
      static_cast<double>(gz_bytes) *
      std::min(ratio * 1.25, static_cast<double>(kMaxDeflateRatio)));
}

// Moves the unused bytes to the front of the buffer and reads after them.
Status TextReader::Refill() {
  const size_t unused = in_end_ - in_begin_;
  std::memmove(in_.get(), in_.get() + in_begin_, unused);
  in_begin_ = 0;
  in_end_ = unused;
  ASSIGN_OR_RETURN(const size_t got,
                   file_.Read(in_.get() + in_end_, in_capacity_ - in_end_));
  in_end_ += got;
  if (in_end_ < in_capacity_) file_ended_ = true;  // Read stops short only then
  return Status::Ok();
}

Result<size_t> TextReader::Read(char* out, size_t capacity) {
  if (!pending_error_.ok()) return pending_error_;
  size_t written = 0;
  pending_error_ = is_gzip() ? ReadGzip(out, capacity, &written)
                             : ReadPlain(out, capacity, &written);
  if (pending_error_.ok() || written > 0) return written;
  return pending_error_;
}

// First the bytes read when the file was opened, then straight from the
// file into `out` (no copy).
Status TextReader::ReadPlain(char* out, size_t capacity, size_t* written) {
  const size_t buffered = std::min(capacity, in_end_ - in_begin_);
  std::memcpy(out, in_.get() + in_begin_, buffered);
  in_begin_ += buffered;
  *written = buffered;
  file_bytes_used_ += buffered;
  if (buffered == capacity || file_ended_) return Status::Ok();
  ASSIGN_OR_RETURN(const size_t got,
                   file_.Read(out + buffered, capacity - buffered));
  *written += got;
  file_bytes_used_ += got;
  if (got < capacity - buffered) file_ended_ = true;
  return Status::Ok();
}

Status TextReader::ReadGzip(char* out, size_t capacity, size_t* written) {
  while (*written < capacity && !gunzip_->done()) {
    const std::string_view in(in_.get() + in_begin_, in_end_ - in_begin_);
    ASSIGN_OR_RETURN(
        const GunzipStream::Progress progress,
        gunzip_->Inflate(in, file_ended_, out + *written, capacity - *written));
    in_begin_ += progress.in_bytes;
    file_bytes_used_ += progress.in_bytes;
    *written += progress.out_bytes;
    if (progress.in_bytes > 0 || progress.out_bytes > 0 || gunzip_->done()) {
      continue;
    }
    // No progress: GunzipStream wants more input, which is only possible
    // while the file goes on and the buffer has room.
    if (file_ended_ || in_end_ - in_begin_ == in_capacity_) {
      return Internal("gunzip of " + file_.path() + " made no progress");
    }
    RETURN_IF_ERROR(Refill());
  }
  return Status::Ok();
}

}  // namespace strag::ingest
