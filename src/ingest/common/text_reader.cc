// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/text_reader.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "ingest/common/gzip.h"

namespace strag::ingest {
namespace {

// At least this much of the file is read at a time, so that a gzip magic
// (2 bytes) can always be told, even across reads.
constexpr size_t kMinInputBytes = 64;
// Deflate cannot expand more than ~1032:1.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kMinGzipMemberBytes = 18;

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
    reader->SetGzipSizeHint();
  } else {
    reader->text_bytes_hint_ = reader->file_.size_bytes();
  }
  return reader;
}

// The trailer's ISIZE is exact for one member under 4 GiB; several members
// or a larger text make it too small and damage makes it anything, so only
// plausible values are kept (too small a hint only costs column growth).
void TextReader::SetGzipSizeHint() {
  const uint64_t gz_bytes = file_.size_bytes();
  if (gz_bytes < kMinGzipMemberBytes) return;
  char tail[4];
  const Result<size_t> got = file_.ReadAt(gz_bytes - 4, tail, sizeof(tail));
  if (!got.ok() || *got != sizeof(tail)) return;
  const uint64_t isize = GzipTrailerIsize(std::string_view(tail, 4));
  if (isize >= gz_bytes && isize <= kMaxDeflateRatio * gz_bytes) {
    text_bytes_hint_ = isize;
  }
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
