// SPDX-License-Identifier: Apache-2.0
#include "ingest/common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ingest/common/gzip.h"

namespace strag::ingest {
namespace {

// Closes the descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() { ::close(fd_); }

 private:
  int fd_;
};

Status ErrnoStatus(const char* verb, const std::string& path, int error) {
  return NotFound(std::string("cannot ") + verb + " " + path + ": " +
                  std::strerror(error));
}

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  FdCloser closer(fd);
  // The size is only a hint: the loop below reads until end of file.
  struct stat info {};
  size_t capacity = 1 << 16;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    capacity = static_cast<size_t>(info.st_size) + 1;
  }
  std::string data(capacity, '\0');
  size_t size = 0;
  while (true) {
    if (size == data.size()) data.resize(2 * data.size());
    const ssize_t got = ::read(fd, data.data() + size, data.size() - size);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path, errno);
    }
    size += static_cast<size_t>(got);
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
