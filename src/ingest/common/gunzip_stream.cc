// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/gunzip_stream.h"

#include <algorithm>
#include <string>

#include "ingest/common/gzip.h"

#define ZLIB_CONST  // next_in is `const Bytef*`: no const_cast needed
#include <zlib.h>

#ifdef STRAG_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace strag::ingest {
namespace {

// zlib counts bytes in 32-bit `uInt`s, so buffers over 4 GiB are fed in
// pieces of at most this size.
constexpr size_t kMaxZlibChunk = size_t{1} << 30;

}  // namespace

bool IsalAvailable() {
#ifdef STRAG_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

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

// ISA-L's state (about 100 KiB: it holds its own window), or nothing when
// the build has no ISA-L (then GunzipStream never creates one).
struct GunzipStream::Isal {
#ifdef STRAG_HAVE_ISAL
  inflate_state state;
#endif
  bool member_started = false;
};

GunzipStream::GunzipStream(std::string_view source_name, GzipEngine engine)
    : source_name_(source_name) {
  if (engine == GzipEngine::kIsal && IsalAvailable()) {
    isal_ = std::make_unique<Isal>();
  } else {
    zlib_ = std::make_unique<Zlib>();
  }
}

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
  if (zlib_ != nullptr && inflateReset(&zlib_->z) != Z_OK) {
    return Internal("zlib inflateReset failed");
  }
  between_members_ = false;
  return Status::Ok();
}

Result<GunzipStream::Progress> GunzipStream::Inflate(std::string_view in,
                                                     bool in_is_last, char* out,
                                                     size_t out_capacity) {
  if (isal_ != nullptr) return InflateIsal(in, in_is_last, out, out_capacity);
  return InflateZlib(in, in_is_last, out, out_capacity);
}

Result<GunzipStream::Progress> GunzipStream::InflateZlib(std::string_view in,
                                                         bool in_is_last,
                                                         char* out,
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

// zlib's own checks of the fixed part of a gzip header, which ISA-L does not
// make (it reads reserved flag bits as optional fields): so both engines
// reject a damaged header the same way. Needs the first 4 bytes of a member
// (`*wait` when they have not all arrived yet).
Status GunzipStream::StartIsalMember(std::string_view rest, bool in_is_last,
                                     size_t in_offset, bool* wait) {
  if (rest.size() < 4 && !in_is_last) {
    *wait = true;
    return Status::Ok();
  }
  // zlib reads these 4 bytes before it checks them, and says so.
  if (rest.size() >= 4 && static_cast<unsigned char>(rest[2]) != 8) {
    return Corrupt(in_offset + 4, "unknown compression method");
  }
  if (rest.size() >= 4 && (static_cast<unsigned char>(rest[3]) & 0xe0) != 0) {
    return Corrupt(in_offset + 4, "unknown header flags set");
  }
#ifdef STRAG_HAVE_ISAL
  isal_inflate_init(&isal_->state);
  isal_->state.crc_flag = ISAL_GZIP;
#endif
  isal_->member_started = true;
  return Status::Ok();
}

#ifdef STRAG_HAVE_ISAL
namespace {

const char* IsalError(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid block";
    case ISAL_INVALID_SYMBOL:
      return "invalid code";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
      return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD:
      return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "incorrect data check";
    default:
      return "ISA-L inflate error";
  }
}

}  // namespace
#endif

// The same member logic as InflateZlib: ISA-L (crc_flag ISAL_GZIP) parses
// the header, checks CRC-32 and ISIZE, and at the end of a member hands
// back the input bytes it has not used, so the next member starts there.
Result<GunzipStream::Progress> GunzipStream::InflateIsal(std::string_view in,
                                                         bool in_is_last,
                                                         char* out,
                                                         size_t out_capacity) {
  Progress progress;
#ifdef STRAG_HAVE_ISAL
  inflate_state* state = &isal_->state;
  while (!done_ && progress.out_bytes < out_capacity) {
    const std::string_view rest = in.substr(progress.in_bytes);
    const size_t at = offset_ + progress.in_bytes;
    bool wait = false;
    if (between_members_) {
      RETURN_IF_ERROR(StartNextMember(rest, in_is_last, at, &wait));
      if (wait || done_) break;
      isal_->member_started = false;
    }
    if (!isal_->member_started) {
      RETURN_IF_ERROR(StartIsalMember(rest, in_is_last, at, &wait));
      if (wait) break;
    }
    if (rest.empty() && !in_is_last) break;  // more input first
    const size_t in_chunk = std::min(rest.size(), kMaxZlibChunk);
    const size_t out_chunk =
        std::min(out_capacity - progress.out_bytes, kMaxZlibChunk);
    // ISA-L never writes through next_in; its API just lacks the const.
    state->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(rest.data()));
    state->avail_in = static_cast<uint32_t>(in_chunk);
    state->next_out = reinterpret_cast<uint8_t*>(out + progress.out_bytes);
    state->avail_out = static_cast<uint32_t>(out_chunk);
    const int rc = isal_inflate(state);
    const size_t used = in_chunk - state->avail_in;
    const size_t made = out_chunk - state->avail_out;
    progress.in_bytes += used;
    progress.out_bytes += made;
    if (rc < 0) {
      // The bytes still in ISA-L's bit buffer have not been decoded yet.
      const size_t buffered = static_cast<size_t>(state->read_in_length) / 8;
      const size_t end = offset_ + progress.in_bytes;
      return Corrupt(end - std::min(end, buffered), IsalError(rc));
    }
    if (state->block_state == ISAL_BLOCK_FINISH) {
      between_members_ = true;
      continue;
    }
    if (used > 0 || made > 0) continue;
    if (progress.in_bytes == in.size()) {  // ISA-L holds all it was given
      if (!in_is_last) break;
      return Truncated(offset_ + progress.in_bytes);
    }
    return Internal("ISA-L inflate made no progress");
  }
#else
  (void)in;
  (void)in_is_last;
  (void)out;
  (void)out_capacity;
  return Internal("GunzipStream: built without ISA-L");
#endif
  offset_ += progress.in_bytes;
  return progress;
}

}  // namespace strag::ingest
