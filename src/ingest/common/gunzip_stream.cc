// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/gunzip_stream.h"

#include <algorithm>
#include <string>

#include "ingest/common/gzip.h"

#define ZLIB_CONST  // next_in is `const Bytef*`: no const_cast needed
#include <zlib.h>

namespace strag::ingest {
namespace {

// zlib counts bytes in 32-bit `uInt`s, so buffers over 4 GiB are fed in
// pieces of at most this size.
constexpr size_t kMaxZlibChunk = size_t{1} << 30;

}  // namespace

// Owns the z_stream (gzip wrapper only) and ends it on destruction. Kept on
// the heap: zlib's state points back at the z_stream, which must not move.
struct GunzipStream::Zlib {
  Zlib() = default;
  Zlib(const Zlib&) = delete;
  Zlib& operator=(const Zlib&) = delete;
  ~Zlib() {
    if (initialized) inflateEnd(&z);
  }
  z_stream z{};
  bool initialized = false;
};

GunzipStream::GunzipStream(std::string_view source_name)
    : source_name_(source_name), zlib_(std::make_unique<Zlib>()) {}

GunzipStream::~GunzipStream() = default;

Status GunzipStream::Truncated(size_t at) const {
  return InvalidInput(source_name_ +
                      ": gzip stream is truncated at compressed byte " +
                      std::to_string(at));
}

Status GunzipStream::Corrupt(size_t at, const char* what) const {
  return InvalidInput(source_name_ + ": gzip stream is corrupt at byte " +
                      std::to_string(at) + ": " +
                      (what != nullptr ? what : "unknown zlib error"));
}

// After the end of a member the stream ends, or another member follows
// (concatenated gzip); anything else is damage, not data to drop silently.
// Sets `*wait` when `rest` is too short to tell yet.
Status GunzipStream::StartNextMember(std::string_view rest, bool in_is_last,
                                     size_t in_offset, bool* wait) {
  if (rest.empty() || (rest.size() < 2 && !in_is_last)) {
    if (in_is_last) {
      done_ = true;
    } else {
      *wait = true;
    }
    return Status::Ok();
  }
  if (!IsGzip(rest)) {
    return Corrupt(in_offset, "unexpected data after the end of a gzip member");
  }
  if (inflateReset(&zlib_->z) != Z_OK) {
    return Internal("zlib inflateReset failed");
  }
  between_members_ = false;
  return Status::Ok();
}

Result<GunzipStream::Progress> GunzipStream::Inflate(std::string_view in,
                                                     bool in_is_last, char* out,
                                                     size_t out_capacity) {
  if (!zlib_->initialized) {
    if (inflateInit2(&zlib_->z, 16 + MAX_WBITS) != Z_OK) {
      return Internal("zlib inflateInit2 failed");
    }
    zlib_->initialized = true;
  }
  z_stream* z = &zlib_->z;
  Progress progress;
  while (!done_ && progress.out_bytes < out_capacity) {
    const std::string_view rest = in.substr(progress.in_bytes);
    if (between_members_) {
      bool wait = false;
      RETURN_IF_ERROR(StartNextMember(rest, in_is_last,
                                      offset_ + progress.in_bytes, &wait));
      if (wait || done_) break;
    }
    if (rest.empty() && !in_is_last) break;  // more input first
    const size_t in_chunk = std::min(rest.size(), kMaxZlibChunk);
    const size_t out_chunk =
        std::min(out_capacity - progress.out_bytes, kMaxZlibChunk);
    z->next_in = reinterpret_cast<const Bytef*>(rest.data());
    z->avail_in = static_cast<uInt>(in_chunk);
    z->next_out = reinterpret_cast<Bytef*>(out + progress.out_bytes);
    z->avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(z, Z_NO_FLUSH);
    progress.in_bytes += in_chunk - z->avail_in;
    progress.out_bytes += out_chunk - z->avail_out;
    if (rc == Z_STREAM_END) {
      between_members_ = true;
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      if (z->avail_out == 0) continue;  // the caller makes room
      if (progress.in_bytes == in.size()) {
        if (!in_is_last) break;
        return Truncated(offset_ + progress.in_bytes);
      }
    }
    if (rc == Z_MEM_ERROR) return Internal("zlib inflate: out of memory");
    return Corrupt(offset_ + progress.in_bytes, z->msg);
  }
  offset_ += progress.in_bytes;
  return progress;
}

}  // namespace strag::ingest
