// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/gunzip_stream.h"

#include <algorithm>
#include <cstring>
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

#ifdef STRAG_HAVE_ISAL
namespace {

// A gzip member's header (RFC 1952), read in pieces of any size. ISA-L gets
// only the deflate data and trailer (ISAL_GZIP_NO_HDR_VER): its own header
// reader makes none of zlib's checks of the method and reserved flags, and
// keeps the header CRC in a local, so that a right FHCRC is refused when the
// header comes in several calls. The checks, bytes and messages are zlib's.
class GzipHeaderReader {
 public:
  // A failed check: zlib's reason, at a byte counted from the member start.
  struct Failure {
    size_t at = 0;
    const char* what = nullptr;
  };

  bool done() const { return part_ == Part::kDone; }

  // Consumes bytes of `in` until the header is whole or `in` is used up,
  // and returns how many (what follows them is not read), or sets
  // `failure`.
  size_t Read(std::string_view in, Failure* failure);

 private:
  enum class Part : uint8_t {
    kFixed,        // ID1 ID2 CM FLG MTIME XFL OS: 10 bytes
    kExtraLength,  // XLEN, 2 bytes (FEXTRA)
    kExtra,        // XLEN bytes
    kName,         // zero-terminated (FNAME)
    kComment,      // zero-terminated (FCOMMENT)
    kCrc,          // CRC16 of the bytes before, 2 bytes (FHCRC)
    kDone
  };
  static constexpr unsigned kFlagHcrc = 0x02;
  static constexpr unsigned kFlagExtra = 0x04;
  static constexpr unsigned kFlagName = 0x08;
  static constexpr unsigned kFlagComment = 0x10;

  size_t Take(std::string_view in);
  const char* Check(size_t* at);
  void Next();

  Part part_ = Part::kFixed;
  unsigned char field_[10] = {};  // a fixed-size part so far
  size_t field_bytes_ = 0;
  bool part_ended_ = false;  // a zero-terminated part reached its zero
  size_t extra_left_ = 0;
  size_t header_bytes_ = 0;
  unsigned flags_ = 0;
  uLong crc_ = 0;  // CRC-32 of the header bytes before its CRC16
};

size_t GzipHeaderReader::Read(std::string_view in, Failure* failure) {
  size_t used = 0;
  while (!done() && used < in.size()) {
    const std::string_view left = in.substr(used);
    const size_t take = Take(left);
    if (part_ != Part::kCrc) {
      crc_ = crc32_z(crc_, reinterpret_cast<const Bytef*>(left.data()), take);
    }
    used += take;
    header_bytes_ += take;
    size_t at = 0;
    if (const char* what = Check(&at); what != nullptr) {
      *failure = {.at = at, .what = what};
      return used;
    }
  }
  return used;
}

// Consumes the next bytes of the current part from `in`; returns how many.
size_t GzipHeaderReader::Take(std::string_view in) {
  switch (part_) {
    case Part::kFixed:
    case Part::kExtraLength:
    case Part::kCrc: {
      const size_t need = part_ == Part::kFixed ? 10 : 2;
      const size_t take = std::min(need - field_bytes_, in.size());
      std::memcpy(field_ + field_bytes_, in.data(), take);
      field_bytes_ += take;
      return take;
    }
    case Part::kExtra: {
      const size_t take = std::min(extra_left_, in.size());
      extra_left_ -= take;
      return take;
    }
    case Part::kName:
    case Part::kComment: {
      const size_t zero = in.find('\0');
      part_ended_ = zero != std::string_view::npos;
      return part_ended_ ? zero + 1 : in.size();
    }
    case Part::kDone:
      break;
  }
  return 0;
}

// Checks what has arrived of the current part, as zlib does (its bytes:
// the magic once 2 bytes are in, method and flags once 4 are, the CRC16
// once it is whole), and moves on once the part is whole.
const char* GzipHeaderReader::Check(size_t* at) {
  switch (part_) {
    case Part::kFixed:
      if (field_bytes_ >= 2 && (field_[0] != 0x1f || field_[1] != 0x8b)) {
        *at = 2;
        return "incorrect header check";
      }
      *at = 4;
      if (field_bytes_ >= 4 && field_[2] != 8) {
        return "unknown compression method";
      }
      if (field_bytes_ >= 4 && (field_[3] & 0xe0) != 0) {
        return "unknown header flags set";
      }
      if (field_bytes_ < 10) return nullptr;
      flags_ = field_[3];
      break;
    case Part::kExtraLength:
      if (field_bytes_ < 2) return nullptr;
      extra_left_ = size_t{field_[0]} | (size_t{field_[1]} << 8);
      break;
    case Part::kExtra:
      if (extra_left_ > 0) return nullptr;
      break;
    case Part::kName:
    case Part::kComment:
      if (!part_ended_) return nullptr;
      break;
    case Part::kCrc:
      if (field_bytes_ < 2) return nullptr;
      if ((unsigned{field_[0]} | (unsigned{field_[1]} << 8)) !=
          (crc_ & 0xffff)) {
        *at = header_bytes_;
        return "header crc mismatch";
      }
      break;
    case Part::kDone:
      return nullptr;
  }
  Next();
  return nullptr;
}

// Moves to the next part the flags say is present.
void GzipHeaderReader::Next() {
  field_bytes_ = 0;
  part_ended_ = false;
  switch (part_) {
    case Part::kFixed:
      part_ = Part::kExtraLength;
      if ((flags_ & kFlagExtra) != 0) return;
      [[fallthrough]];
    case Part::kExtraLength:
      part_ = Part::kExtra;
      if (extra_left_ > 0) return;
      [[fallthrough]];
    case Part::kExtra:
      part_ = Part::kName;
      if ((flags_ & kFlagName) != 0) return;
      [[fallthrough]];
    case Part::kName:
      part_ = Part::kComment;
      if ((flags_ & kFlagComment) != 0) return;
      [[fallthrough]];
    case Part::kComment:
      part_ = Part::kCrc;
      if ((flags_ & kFlagHcrc) != 0) return;
      [[fallthrough]];
    case Part::kCrc:
    case Part::kDone:
      part_ = Part::kDone;
  }
}

}  // namespace
#endif

// ISA-L's state (about 100 KiB: it holds its own window), or nothing when
// the build has no ISA-L (then GunzipStream never creates one).
struct GunzipStream::Isal {
#ifdef STRAG_HAVE_ISAL
  inflate_state state;
  GzipHeaderReader header;  // of the current member
#endif
  size_t member_start = 0;  // its first compressed byte
  // The last compressed bytes consumed, up to 8: when a checksum fails they
  // are the member's trailer, which may have come in earlier calls.
  char tail[8] = {};
  size_t tail_size = 0;

  void KeepTail(std::string_view consumed) {
    if (consumed.empty()) return;
    const std::string_view last = consumed.substr(
        consumed.size() - std::min(consumed.size(), sizeof(tail)));
    const size_t keep = std::min(tail_size, sizeof(tail) - last.size());
    std::memmove(tail, tail + tail_size - keep, keep);
    std::memcpy(tail + keep, last.data(), last.size());
    tail_size = keep + last.size();
  }
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
    default:
      return "ISA-L inflate error";
  }
}

uint32_t LoadLe32(const char* bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes);
  return uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) |
         (uint32_t{b[3]} << 24);
}

}  // namespace

// Reads the next bytes of the member's header from `rest` (`*used` of them);
// once it is whole, starts ISA-L on the deflate data that follows.
Status GunzipStream::ReadIsalHeader(std::string_view rest, size_t* used) {
  GzipHeaderReader::Failure failure;
  *used = isal_->header.Read(rest, &failure);
  if (failure.what != nullptr) {
    return Corrupt(isal_->member_start + failure.at, failure.what);
  }
  if (isal_->header.done()) {
    isal_inflate_init(&isal_->state);
    isal_->state.crc_flag = ISAL_GZIP_NO_HDR_VER;
  }
  return Status::Ok();
}

// The error of a failed isal_inflate over `given`, which starts at
// compressed byte `at`. After damaged deflate data ISA-L's input counts are
// not to be trusted (avail_in may have wrapped, read_in_length gone
// negative): the byte is where next_in stopped, within `given`, less the
// whole bytes still in its bit buffer. That is zlib's byte for most damage
// (a few bytes off for some, and for a block header cut between two calls
// where the second call began). A wrong CRC-32 and a wrong ISIZE fail
// alike, once the trailer is consumed; the trailer tells which, so that the
// error is zlib's, at zlib's byte.
Status GunzipStream::IsalFailure(int rc, size_t at, std::string_view given) {
  const inflate_state& state = isal_->state;
  const auto begin = reinterpret_cast<uintptr_t>(given.data());
  const auto next = reinterpret_cast<uintptr_t>(state.next_in);
  const size_t used =
      next < begin ? 0 : std::min<size_t>(next - begin, given.size());
  const size_t end = at + used;
  if (rc != ISAL_INCORRECT_CHECKSUM) {
    const auto buffered =
        static_cast<size_t>(std::clamp(state.read_in_length, 0, 64) / 8);
    return Corrupt(end - std::min(end, buffered), IsalError(rc));
  }
  isal_->KeepTail(given.substr(0, used));
  if (isal_->tail_size == sizeof(isal_->tail) &&
      LoadLe32(isal_->tail) != state.crc) {
    return Corrupt(end - 4, "incorrect data check");
  }
  return Corrupt(end, "incorrect length check");
}
#endif

// The same member logic as InflateZlib: the header is read here, then ISA-L
// (crc_flag ISAL_GZIP_NO_HDR_VER) inflates the deflate data, checks CRC-32
// and ISIZE, and at the end of a member hands back the input bytes it has
// not used, so the next member starts there.
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
    if (between_members_) {
      bool wait = false;
      RETURN_IF_ERROR(StartNextMember(rest, in_is_last, at, &wait));
      if (wait || done_) break;
      isal_->header = GzipHeaderReader();
      isal_->member_start = at;
    }
    if (!isal_->header.done()) {
      size_t used = 0;
      RETURN_IF_ERROR(ReadIsalHeader(rest, &used));
      progress.in_bytes += used;
      if (isal_->header.done()) continue;
      if (!in_is_last) break;  // more input first
      return Truncated(offset_ + progress.in_bytes);
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
    if (rc < 0) return IsalFailure(rc, at, rest.substr(0, in_chunk));
    const size_t used = in_chunk - state->avail_in;
    const size_t made = out_chunk - state->avail_out;
    progress.in_bytes += used;
    progress.out_bytes += made;
    isal_->KeepTail(rest.substr(0, used));
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
