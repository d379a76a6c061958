// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "ingest/common/gzip.h"
#include "ingest/common/input_limits.h"

namespace strag::ingest {
namespace {

Status ErrnoStatus(const char* verb, const std::string& path, int error) {
  return NotFound(std::string("cannot ") + verb + " " + path + ": " +
                  std::strerror(error));
}

}  // namespace

Result<InputFile> InputFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  struct stat info {};
  uint64_t size = 0;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    size = static_cast<uint64_t>(info.st_size);
  }
  return InputFile(fd, path, size);
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      size_bytes_(other.size_bytes_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_bytes_ = other.size_bytes_;
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status InputFile::ReadError(int error) const {
  return ErrnoStatus("read", path_, error);
}

Result<size_t> InputFile::Read(char* buffer, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t got = ::read(fd_, buffer + done, size - done);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return ReadError(errno);
    }
    done += static_cast<size_t>(got);
  }
  return done;
}

Result<size_t> InputFile::ReadAt(uint64_t offset, char* buffer, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd_, buffer + done, size - done,
                                static_cast<off_t>(offset + done));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return ReadError(errno);
    }
    done += static_cast<size_t>(got);
  }
  return done;
}

Result<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  ASSIGN_OR_RETURN(InputFile file, InputFile::Open(path));
  // The size is only a hint: the loop below reads until end of file (or
  // one byte past max_bytes, which says it is too large).
  const size_t most = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1;
  std::string data(
      std::min<uint64_t>(
          file.size_bytes() > 0 ? file.size_bytes() + 1 : 1 << 16, most),
      '\0');
  size_t size = 0;
  while (true) {
    if (size == data.size()) {
      if (size >= most) {
        return InvalidInput(path + ": larger than " + LimitText(max_bytes) +
                            ", more than such a file holds");
      }
      data.resize(std::min(2 * data.size(), most));
    }
    ASSIGN_OR_RETURN(const size_t got,
                     file.Read(data.data() + size, data.size() - size));
    size += got;
    if (size < data.size()) break;  // Read stops short only at the end
  }
  data.resize(size);
  return data;
}

Result<std::string> ReadFileMaybeGz(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  if (!IsGzip(bytes)) return bytes;  // spares MaybeGunzip's copy
  return MaybeGunzip(bytes, path);
}

}  // namespace strag::ingest
