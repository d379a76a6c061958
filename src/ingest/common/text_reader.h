// SPDX-License-Identifier: Apache-2.0
// TextReader: the text of a file, plain or gzip, read block by block, so a
// large trace is never held whole (see ForEachTextBlock for the pipelined
// loop over it).

#ifndef STRAG_SRC_INGEST_COMMON_TEXT_READER_H_
#define STRAG_SRC_INGEST_COMMON_TEXT_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ingest/common/file.h"
#include "ingest/common/gunzip_stream.h"

namespace strag::ingest {

class TextReader {
 public:
  // Opens `path` and reads its first block. A file whose content starts
  // with the gzip magic is inflated as it is read, whatever its name
  // (concatenated members too). `block_bytes` is how much of the file one
  // read takes; `engine` which inflater a gzip file gets. Fails with
  // kNotFound like InputFile.
  static Result<std::unique_ptr<TextReader>> Open(
      const std::string& path, size_t block_bytes,
      GzipEngine engine = GzipEngine::kZlib);
  TextReader(const TextReader&) = delete;
  TextReader& operator=(const TextReader&) = delete;

  // Writes the next text into `out` until it holds `capacity` bytes or the
  // text ends, and returns how many bytes it wrote: fewer than `capacity`
  // only at the end, 0 after it. So the pieces of a text depend only on the
  // capacities asked for. Errors are those of InputFile::Read and of
  // GunzipStream (with the path as source name); text inflated before an
  // error is returned first and the error by the next call, so a reader of
  // the pieces sees everything that precedes the damage.
  Result<size_t> Read(char* out, size_t capacity);

  bool is_gzip() const { return gunzip_ != nullptr; }
  // Expected text size in bytes, 0 when unknown: the file size, or for gzip
  // the trailer's size when it is plausible (a single member under 4 GiB),
  // else an estimate from the first compressed bytes (their ratio, with a
  // quarter more).
  uint64_t text_bytes_hint() const { return text_bytes_hint_; }
  // The file's size (0 for a pipe), and how much of it the text returned so
  // far came from (for gzip, the compressed bytes inflated).
  uint64_t file_bytes() const { return file_.size_bytes(); }
  uint64_t file_bytes_used() const { return file_bytes_used_; }

 private:
  TextReader(InputFile file, size_t block_bytes);
  Status Refill();
  Status ReadPlain(char* out, size_t capacity, size_t* written);
  Status ReadGzip(char* out, size_t capacity, size_t* written);
  void SetGzipSizeHint(GzipEngine engine);
  static uint64_t SampledGzipTextBytes(std::string_view first, bool is_all,
                                       uint64_t gz_bytes, GzipEngine engine,
                                       bool* exact);

  InputFile file_;
  std::unique_ptr<GunzipStream> gunzip_;  // null for plain text
  // File bytes read but not yet used: [in_begin_, in_end_) of in_.
  size_t in_capacity_;
  std::unique_ptr<char[]> in_;
  size_t in_begin_ = 0;
  size_t in_end_ = 0;
  bool file_ended_ = false;
  Status pending_error_;
  uint64_t text_bytes_hint_ = 0;
  uint64_t file_bytes_used_ = 0;
};

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_TEXT_READER_H_
