// SPDX-License-Identifier: Apache-2.0
// File reads: the only file I/O in ingest. Parsers take the bytes.

#ifndef STRAG_SRC_INGEST_COMMON_FILE_H_
#define STRAG_SRC_INGEST_COMMON_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "base/status.h"

namespace strag::ingest {

// A file open for reading, closed on destruction. Move-only. Errors are
// kNotFound and name the path: "cannot open <path>: <reason>" or "cannot
// read <path>: <reason>" (e.g. for a directory).
class InputFile {
 public:
  static Result<InputFile> Open(const std::string& path);
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  // Reads the next bytes into `buffer` until it holds `size` bytes or the
  // file ends; returns how many (fewer than `size` only at the end). Works
  // on pipes.
  Result<size_t> Read(char* buffer, size_t size);
  // Reads up to `size` bytes at `offset` without moving the read position
  // (regular files only); returns how many.
  Result<size_t> ReadAt(uint64_t offset, char* buffer, size_t size);

  // Size of a regular file; 0 for pipes and other files of unknown size.
  uint64_t size_bytes() const { return size_bytes_; }
  const std::string& path() const { return path_; }

 private:
  InputFile(int fd, std::string path, uint64_t size_bytes)
      : fd_(fd), path_(std::move(path)), size_bytes_(size_bytes) {}
  Status ReadError(int error) const;

  int fd_ = -1;
  std::string path_;
  uint64_t size_bytes_ = 0;
};

// Returns the whole content of the file at `path`. Works on pipes and other
// files whose size is unknown. Fails like InputFile, and with kInvalidInput
// when the file holds more than `max_bytes` (a metadata file that is
// /dev/zero must not be held whole).
Result<std::string> ReadFile(const std::string& path,
                             size_t max_bytes = SIZE_MAX);

// ReadFile, then MaybeGunzip with `path` as the source name: a `.gz` file is
// recognised by its content, not its name. Holds the compressed and the
// inflated bytes at once; large inputs are better streamed (TextReader).
Result<std::string> ReadFileMaybeGz(const std::string& path);

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_COMMON_FILE_H_
