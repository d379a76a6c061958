// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/gzip.h"

#include <algorithm>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ingest/common/gunzip_stream.h"
#include "ingest/common/input_limits.h"

#define ZLIB_CONST  // next_in is `const Bytef*`: no const_cast needed
#include <zlib.h>

#ifdef STRAG_HAVE_ISAL
#include <isa-l/igzip_lib.h>

#include <vector>
#endif

namespace strag::ingest {
namespace {

// zlib counts bytes in 32-bit `uInt`s, so buffers over 4 GiB are fed in
// pieces of at most this size.
constexpr size_t kMaxZlibChunk = size_t{1} << 30;
// Deflate cannot expand more than ~1032:1; a trailer promising more is
// corrupt, so the first output guess never exceeds this ratio.
constexpr size_t kMaxDeflateRatio = 1032;
constexpr size_t kMinOutputGuess = 4096;

class Deflater {
 public:
  Deflater() = default;
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  ~Deflater() {
    if (initialized_) deflateEnd(&z_);
  }
  bool Init(int level) {
    initialized_ = deflateInit2(&z_, level, Z_DEFLATED, 16 + MAX_WBITS,
                                /*memLevel=*/8, Z_DEFAULT_STRATEGY) == Z_OK;
    return initialized_;
  }
  z_stream* z() { return &z_; }

 private:
  z_stream z_{};
  bool initialized_ = false;
};

// The gzip trailer stores the size of the last member mod 2^32; a good first
// guess for the output size, clamped to what deflate can physically produce.
size_t OutputSizeGuess(std::string_view bytes) {
  size_t guess = 4 * bytes.size();
  if (bytes.size() >= 18) {  // smallest possible gzip member
    const uint32_t isize = GzipTrailerIsize(bytes.substr(bytes.size() - 4));
    guess = std::max(guess, size_t{isize} + 1);
  }
  return std::clamp(guess, kMinOutputGuess,
                    std::max(kMinOutputGuess, kMaxDeflateRatio * bytes.size()));
}

// Deflates all of `bytes` into `*out` as one gzip member at `level`.
Status ZlibCompress(std::string_view bytes, int level, std::string* out) {
  Deflater deflater;
  if (!deflater.Init(level)) return Internal("zlib deflateInit2 failed");
  z_stream* z = deflater.z();
  const auto* in = reinterpret_cast<const Bytef*>(bytes.data());
  out->resize(deflateBound(z, static_cast<uLong>(bytes.size())));
  size_t in_pos = 0;
  size_t out_pos = 0;
  while (true) {
    if (out_pos == out->size()) out->resize(2 * out->size());
    const size_t in_chunk = std::min(bytes.size() - in_pos, kMaxZlibChunk);
    const size_t out_chunk = std::min(out->size() - out_pos, kMaxZlibChunk);
    const bool last_input = in_pos + in_chunk == bytes.size();
    z->next_in = in + in_pos;
    z->avail_in = static_cast<uInt>(in_chunk);
    z->next_out = reinterpret_cast<Bytef*>(out->data() + out_pos);
    z->avail_out = static_cast<uInt>(out_chunk);
    const int rc = deflate(z, last_input ? Z_FINISH : Z_NO_FLUSH);
    in_pos += in_chunk - z->avail_in;
    out_pos += out_chunk - z->avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Internal("zlib deflate failed with code " + std::to_string(rc));
    }
  }
  out->resize(out_pos);
  return Status::Ok();
}

#ifdef STRAG_HAVE_ISAL
// igzip level 1 into one gzip member (its own header and trailer).
Status IsalCompress(std::string_view bytes, std::string* out) {
  isal_zstream s;
  isal_deflate_init(&s);
  std::vector<uint8_t> level_buf(ISAL_DEF_LVL1_DEFAULT);
  s.gzip_flag = IGZIP_GZIP;
  s.level = 1;
  s.level_buf = level_buf.data();
  s.level_buf_size = static_cast<uint32_t>(level_buf.size());
  // Incompressible text grows by stored-block headers only (5 bytes per
  // 64 KiB) plus the gzip header and trailer.
  out->resize(bytes.size() + bytes.size() / 64 + 1024);
  size_t in_pos = 0, out_pos = 0;
  while (s.internal_state.state != ZSTATE_END) {
    if (out_pos == out->size()) out->resize(2 * out->size());
    const size_t in_chunk = std::min(bytes.size() - in_pos, kMaxZlibChunk);
    const size_t out_chunk = std::min(out->size() - out_pos, kMaxZlibChunk);
    s.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(bytes.data())) +
                in_pos;
    s.avail_in = static_cast<uint32_t>(in_chunk);
    s.end_of_stream = in_pos + in_chunk == bytes.size() ? 1 : 0;
    s.flush = NO_FLUSH;
    s.next_out = reinterpret_cast<uint8_t*>(out->data() + out_pos);
    s.avail_out = static_cast<uint32_t>(out_chunk);
    const int rc = isal_deflate(&s);
    if (rc != COMP_OK) {
      return Internal("isal_deflate failed with code " + std::to_string(rc));
    }
    in_pos += in_chunk - s.avail_in;
    out_pos += out_chunk - s.avail_out;
  }
  out->resize(out_pos);
  return Status::Ok();
}
#endif

}  // namespace

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

uint32_t GzipTrailerIsize(std::string_view last_four_bytes) {
  const auto* tail =
      reinterpret_cast<const unsigned char*>(last_four_bytes.data());
  return uint32_t{tail[0]} | (uint32_t{tail[1]} << 8) |
         (uint32_t{tail[2]} << 16) | (uint32_t{tail[3]} << 24);
}

Result<std::string> MaybeGunzip(std::string_view bytes,
                                std::string_view source_name,
                                size_t max_text_bytes, bool* over_limit,
                                GzipEngine engine) {
  if (over_limit != nullptr) *over_limit = false;
  if (!IsGzip(bytes)) return std::string(bytes);
  GunzipStream stream(source_name, engine);
  // One byte past the limit says the text is larger.
  const size_t most =
      max_text_bytes == SIZE_MAX ? SIZE_MAX : max_text_bytes + 1;
  std::string out(std::min(OutputSizeGuess(bytes), most), '\0');
  size_t in_pos = 0;
  size_t out_pos = 0;
  while (!stream.done()) {
    if (out_pos == out.size()) {
      if (out_pos >= most) {
        if (over_limit != nullptr) *over_limit = true;
        return InvalidInput(std::string(source_name) +
                            ": the gzip text is larger than " +
                            LimitText(max_text_bytes));
      }
      out.resize(std::min(2 * out.size(), most));
    }
    ASSIGN_OR_RETURN(
        const GunzipStream::Progress progress,
        stream.Inflate(bytes.substr(in_pos), /*in_is_last=*/true,
                       out.data() + out_pos, out.size() - out_pos));
    in_pos += progress.in_bytes;
    out_pos += progress.out_bytes;
    if (progress.in_bytes == 0 && progress.out_bytes == 0 && !stream.done()) {
      return Internal("gunzip made no progress");  // GunzipStream's contract
    }
  }
  out.resize(out_pos);
  return out;
}

Result<std::string> GzipCompress(std::string_view bytes) {
  std::string out;
  RETURN_IF_ERROR(ZlibCompress(bytes, /*level=*/6, &out));
  return out;
}

Status GzipCompressFast(std::string_view bytes, std::string* out) {
#ifdef STRAG_HAVE_ISAL
  return IsalCompress(bytes, out);
#else
  return ZlibCompress(bytes, /*level=*/1, out);
#endif
}

namespace {

constexpr unsigned char kFlagExtra = 0x04;
constexpr size_t kPlainHeaderBytes = 10;
constexpr char kSizeField[4] = {'S', 'Z', 8, 0};  // SI1, SI2, LEN (LE)

}  // namespace

bool AddMemberSize(std::string* member) {
  if (member->size() < kPlainHeaderBytes + 8 || !IsGzip(*member) ||
      (*member)[2] != 8 || (*member)[3] != 0) {
    return false;
  }
  // ID1 ID2 CM FLG MTIME(4) XFL OS | XLEN(2) | SI1 SI2 LEN(2) size(8)
  std::string extra(kSizedMemberHeaderBytes - kPlainHeaderBytes, '\0');
  extra[0] = 12;  // XLEN: one subfield of 4 + 8 bytes
  std::memcpy(extra.data() + 2, kSizeField, sizeof kSizeField);
  const uint64_t size = member->size() + extra.size();
  for (size_t b = 0; b < 8; ++b) {
    extra[6 + b] = static_cast<char>((size >> (8 * b)) & 0xFF);
  }
  member->insert(kPlainHeaderBytes, extra);
  (*member)[3] = static_cast<char>(kFlagExtra);
  return true;
}

uint64_t SizedMemberBytes(std::string_view header) {
  if (header.size() < kSizedMemberHeaderBytes || !IsGzip(header) ||
      header[2] != 8 || static_cast<unsigned char>(header[3]) != kFlagExtra ||
      header[10] != 12 || header[11] != 0 ||
      header.substr(12, 4) != std::string_view(kSizeField, 4)) {
    return 0;
  }
  uint64_t size = 0;
  for (size_t b = 8; b-- > 0;) {
    size = (size << 8) | static_cast<unsigned char>(header[16 + b]);
  }
  return size;
}

}  // namespace strag::ingest
