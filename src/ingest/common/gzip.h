// SPDX-License-Identifier: Apache-2.0
// Transparent gzip support for readers and writers (pure: bytes in, bytes
// out; no file I/O).

#ifndef STRAG_SRC_INGEST_COMMON_GZIP_H_
#define STRAG_SRC_INGEST_COMMON_GZIP_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ingest/common/gunzip_stream.h"

namespace strag::ingest {

// Result is the project-wide Result<T>, re-exported so that readers can say
// `ingest::Result<...>`.
using ::strag::Result;

// True when `bytes` start with the gzip magic number (1f 8b).
bool IsGzip(std::string_view bytes);

// The ISIZE field of a gzip trailer, given the last 4 bytes of a stream:
// the text size of the last member, mod 2^32 (little endian).
uint32_t GzipTrailerIsize(std::string_view last_four_bytes);

// Inflates `bytes` when they start with the gzip magic, else returns them
// unchanged. Concatenated gzip members (as written by `cat a.gz b.gz` or
// pigz) are inflated one after the other into a single output.
//
// `source_name` only labels errors, e.g. a truncated stream gives
// kInvalidInput "trace.csv.gz: gzip stream is truncated at compressed byte
// 1234" and a damaged one "...: gzip stream is corrupt at byte 56: invalid
// block type". Linear in the output size; the output buffer grows
// geometrically from a guess taken from the gzip trailer. Holds the whole
// output: large files are better streamed (TextReader, GunzipStream). A
// text of more than `max_text_bytes` is kInvalidInput ("...: the gzip text
// is larger than 64 MiB"), found before more than that is held;
// `over_limit` (when given) tells that failure from a damaged stream.
// `engine`: the inflater (GunzipStream's).
Result<std::string> MaybeGunzip(std::string_view bytes,
                                std::string_view source_name,
                                size_t max_text_bytes = SIZE_MAX,
                                bool* over_limit = nullptr,
                                GzipEngine engine = GzipEngine::kZlib);

// Compresses `bytes` into one gzip member (deflate level 6), the format
// `MaybeGunzip` and `gzip -d` read. Fails only if zlib itself fails
// (kInternal).
Result<std::string> GzipCompress(std::string_view bytes);

// Compresses `bytes` into one gzip member at a fast level, into `*out`
// (replaced; its capacity is reused): ISA-L's igzip level 1 where the build
// has it, else zlib level 1. On ops CSV text (8 MiB pieces, 2026-12): igzip
// level 1 445 MB/s to 21.6% of the text, zlib level 1 81 MB/s to 23.2%,
// zlib level 6 (GzipCompress) 24 MB/s to 20.0%. Fails only if the library
// fails (kInternal).
Status GzipCompressFast(std::string_view bytes, std::string* out);

// Gzip members that say their own size (ParallelGzipWriter writes them): an
// extra field (RFC 1952 FEXTRA) holding subfield 'S','Z' of 8 bytes, the
// whole member's size in bytes, little endian, so that a reader can step
// from member to member without inflating them (as BGZF's 'BC' field does,
// for members of any size). Every gzip reader skips the field.
inline constexpr size_t kSizedMemberHeaderBytes = 24;

// Rewrites `*member`, one gzip member with a plain 10-byte header (FLG 0, as
// GzipCompressFast writes), to carry its size; false (nothing changed) for
// any other header.
bool AddMemberSize(std::string* member);

// The size that a member's first kSizedMemberHeaderBytes bytes say, or 0
// when they are not the header AddMemberSize writes.
uint64_t SizedMemberBytes(std::string_view header);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_GZIP_H_
