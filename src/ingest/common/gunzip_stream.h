// SPDX-License-Identifier: Apache-2.0
// GunzipStream: inflates a gzip stream handed over in pieces, so that a
// large `.gz` is never held whole, compressed or not (pure: no file I/O).
// MaybeGunzip is built on it, so both report the same errors. Two engines:
// zlib (the default), and ISA-L (igzip, several times faster) where the
// build has it.

#ifndef STRAG_SRC_INGEST_COMMON_GUNZIP_STREAM_H_
#define STRAG_SRC_INGEST_COMMON_GUNZIP_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace strag::ingest {

// Which inflater a GunzipStream uses. kIsal is ISA-L's igzip where the build
// found it (IsalAvailable()), else zlib. Both give the same text, and the
// same messages at the same bytes for truncated streams, damaged headers
// (read by GunzipStream itself for ISA-L), wrong CRC-32 or ISIZE and junk
// after a member. For damaged deflate data both say "gzip stream is corrupt
// at byte N: <reason>", N and the reason being where and how each engine
// noticed: ISA-L's reasons are coarser ("invalid block", "invalid code",
// "invalid distance too far back"), its N mostly zlib's, never past the
// input it was given, but a few bytes off for some damage (and, for a
// damaged block header cut between two calls, dependent on the cut).
enum class GzipEngine : uint8_t { kZlib, kIsal };

// True when the build links ISA-L (GzipEngine::kIsal is not zlib).
bool IsalAvailable();

class GunzipStream {
 public:
  struct Progress {
    size_t in_bytes = 0;   // compressed bytes consumed
    size_t out_bytes = 0;  // text bytes written
  };

  // `source_name` labels errors. The stream must start with a gzip member
  // (see IsGzip); concatenated members are inflated one after the other.
  explicit GunzipStream(std::string_view source_name,
                        GzipEngine engine = GzipEngine::kZlib);
  GunzipStream(const GunzipStream&) = delete;
  GunzipStream& operator=(const GunzipStream&) = delete;
  ~GunzipStream();

  // Inflates the next compressed bytes `in` into `out[0, out_capacity)`
  // until the output is full, the input is used up or the stream ends.
  // `in_is_last` says that nothing follows `in`. Bytes of `in` that are not
  // consumed must be passed again, first, in the next call: after the end of
  // a member, one byte cannot yet be told from the start of the next.
  //
  // With `in_is_last` and room in `out`, a call makes progress, ends the
  // stream (done()) or fails; without it, no progress means "more input".
  // Errors are kInvalidInput and name the compressed byte offset counted
  // from the first byte ever passed, e.g. "trace.csv.gz: gzip stream is
  // truncated at compressed byte 1234", "...: gzip stream is corrupt at byte
  // 56: invalid block type"; then the stream is unusable.
  Result<Progress> Inflate(std::string_view in, bool in_is_last, char* out,
                           size_t out_capacity);

  // True once the last input was consumed at the end of a member.
  bool done() const { return done_; }

 private:
  struct Zlib;  // the z_stream; kept out of this header
  struct Isal;  // ISA-L's inflate_state (gunzip_stream.cc)
  Result<Progress> InflateZlib(std::string_view in, bool in_is_last, char* out,
                               size_t out_capacity);
  Result<Progress> InflateIsal(std::string_view in, bool in_is_last, char* out,
                               size_t out_capacity);
  Status StartNextMember(std::string_view rest, bool in_is_last,
                         size_t in_offset, bool* wait);
  Status ReadIsalHeader(std::string_view rest, size_t* used);
  Status IsalFailure(int rc, size_t at, std::string_view given);
  Status Truncated(size_t at) const;
  Status Corrupt(size_t at, const char* what) const;

  std::string source_name_;
  std::unique_ptr<Zlib> zlib_;  // null when ISA-L is used
  std::unique_ptr<Isal> isal_;  // null when zlib is used
  size_t offset_ = 0;           // compressed bytes consumed by earlier calls
  bool between_members_ = false;
  bool done_ = false;
};

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_GUNZIP_STREAM_H_
