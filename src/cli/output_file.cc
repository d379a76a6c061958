// SPDX-License-Identifier: Apache-2.0
#include "cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace strag::cli {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText(int error) { return std::strerror(error); }

// The folder of `path` ("." for a bare name).
std::string ParentOf(const std::string& path) {
  const std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// Writes all of `bytes` to `fd`; returns 0 or the errno of the failure.
int WriteAll(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

// The permissions a new file gets from open(2): 0666 less the umask.
mode_t NewFileMode() {
  const mode_t mask = umask(0);
  umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

Status CannotWrite(const std::string& path, int error) {
  return IoError("cannot write " + path + ": " + ErrnoText(error));
}

}  // namespace

OutputFiles::~OutputFiles() {
  if (committed_) return;
  for (const Output& o : outputs_) {
    if (!o.temp.empty()) unlink(o.temp.c_str());
  }
  for (auto it = made_dirs_.rbegin(); it != made_dirs_.rend(); ++it) {
    rmdir(it->c_str());  // only when empty: fails otherwise
  }
}

void OutputFiles::AddInput(const std::string& path) {
  struct stat st;
  if (path.empty() || path == "-" || stat(path.c_str(), &st) != 0) return;
  inputs_.emplace_back(st.st_dev, st.st_ino);
}

bool OutputFiles::IsInput(const std::string& path) const {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  for (const auto& [dev, ino] : inputs_) {
    if (dev == st.st_dev && ino == st.st_ino) return true;
  }
  return false;
}

OutputFiles::Output* OutputFiles::Find(const std::string& path) {
  for (Output& o : outputs_) {
    if (o.path == path) return &o;
  }
  return nullptr;
}

const OutputFiles::Output* OutputFiles::Find(const std::string& path) const {
  return const_cast<OutputFiles*>(this)->Find(path);
}

Status OutputFiles::CheckTarget(std::string_view flag, const std::string& path,
                                Output* out) const {
  const std::string head =
      "flag " + std::string(flag) + ": cannot write " + path + ": ";
  if (path.empty())
    return InvalidInput("flag " + std::string(flag) + ": empty path");
  out->target = path;
  // /dev/stdout and the like name an open file: written through, in place.
  const bool device_path =
      path.starts_with("/dev/") || path.starts_with("/proc/");
  struct stat st;
  if (!device_path && lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // The file a link names is replaced, not the link.
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved) != nullptr) out->target = resolved;
  }
  if (stat(out->target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return InvalidInput(head + "it is a folder");
    if (IsInput(out->target)) {
      return InvalidInput("flag " + std::string(flag) + ": " + path +
                          " is an input of this command; refusing to "
                          "overwrite it");
    }
    out->special = !S_ISREG(st.st_mode) || device_path;
    if (out->special && access(out->target.c_str(), W_OK) != 0) {
      return InvalidInput(head + ErrnoText(errno));
    }
  }
  if (!out->special) {
    const std::string parent = ParentOf(out->target);
    if (stat(parent.c_str(), &st) != 0) {
      return InvalidInput(head + "folder " + parent + ": " + ErrnoText(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      return InvalidInput(head + parent + " is not a folder");
    }
    if (access(parent.c_str(), W_OK | X_OK) != 0) {
      return InvalidInput(head + "folder " + parent + ": " + ErrnoText(errno));
    }
  }
  std::error_code ec;
  const fs::path key = fs::weakly_canonical(fs::absolute(out->target), ec);
  out->key = ec ? out->target : key.string();
  for (const Output& o : outputs_) {
    if (o.key == out->key) {
      return InvalidInput("flag " + std::string(flag) + ": " + path +
                          " is already the output of " + o.flag);
    }
  }
  return Status::Ok();
}

Status OutputFiles::Declare(std::string_view flag, const std::string& path) {
  Output out;
  out.path = path;
  out.flag = std::string(flag);
  if (path == "-") {
    if (uses_stdout_) {
      return InvalidInput("flag " + std::string(flag) +
                          ": only one output can be standard output (-)");
    }
    uses_stdout_ = true;
    outputs_.push_back(std::move(out));
    return Status::Ok();
  }
  RETURN_IF_ERROR(CheckTarget(flag, path, &out));
  outputs_.push_back(std::move(out));
  return Status::Ok();
}

Status OutputFiles::DeclareDirectory(std::string_view flag,
                                     const std::string& dir) {
  const std::string head = "flag " + std::string(flag) + ": ";
  if (dir.empty()) return InvalidInput(head + "empty path");
  fs::path at(dir);
  struct stat st;
  // The nearest existing folder of dir, itself included.
  while (stat(at.string().c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      return InvalidInput(head + "cannot write in " + dir + ": " +
                          ErrnoText(errno));
    }
    const fs::path parent = at.parent_path();
    at = parent.empty() || parent == at ? fs::path(".") : parent;
  }
  if (!S_ISDIR(st.st_mode)) {
    return InvalidInput(head + "cannot write in " + dir + ": " + at.string() +
                        " is not a folder");
  }
  if (access(at.string().c_str(), W_OK | X_OK) != 0) {
    return InvalidInput(head + "cannot write in " + dir + ": " +
                        ErrnoText(errno));
  }
  return Status::Ok();
}

Status OutputFiles::CreateDirectories(const std::string& dir) {
  std::vector<fs::path> missing;  // deepest first
  struct stat st;
  for (fs::path at(dir); !at.empty() && stat(at.string().c_str(), &st) != 0;
       at = at.parent_path()) {
    missing.push_back(at);
    if (at.parent_path() == at) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (mkdir(it->string().c_str(), 0777) != 0 && errno != EEXIST) {
      return IoError("cannot create " + it->string() + ": " + ErrnoText(errno));
    }
    made_dirs_.push_back(it->string());
  }
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return InvalidInput("cannot create " + dir + ": not a folder");
  }
  return Status::Ok();
}

Status OutputFiles::WriteTemp(Output* out, std::string_view bytes) {
  // Hidden, in the target's folder (a rename stays in one file system), and
  // short enough for NAME_MAX whatever the target's name.
  std::string name = fs::path(out->target).filename().string();
  if (name.size() > 200) name.resize(200);
  std::string temp =
      (fs::path(ParentOf(out->target)) / ("." + name + ".strag-XXXXXX"))
          .string();
  const int fd = mkstemp(temp.data());
  if (fd < 0) return CannotWrite(out->path, errno);
  out->temp = temp;
  // The mode a plain open would give: the replaced file's, else 0666 less
  // the umask (mkstemp makes 0600).
  struct stat st;
  const mode_t mode = stat(out->target.c_str(), &st) == 0
                          ? static_cast<mode_t>(st.st_mode & 07777)
                          : NewFileMode();
  int error = fchmod(fd, mode) != 0 ? errno : 0;
  if (error == 0) error = WriteAll(fd, bytes);
  if (close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    unlink(out->temp.c_str());
    out->temp.clear();
    return CannotWrite(out->path, error);
  }
  return Status::Ok();
}

Status OutputFiles::Write(const std::string& path, std::string_view bytes) {
  if (Find(path) == nullptr) RETURN_IF_ERROR(Declare("--out", path));
  Output* out = Find(path);
  if (out->written) return Internal(path + " written twice");
  out->written = true;
  if (path == "-") {
    stdout_bytes_.assign(bytes);
    return Status::Ok();
  }
  if (!out->special) return WriteTemp(out, bytes);
  const int fd = open(out->target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return CannotWrite(path, errno);
  int error = WriteAll(fd, bytes);
  if (close(fd) != 0 && error == 0) error = errno;
  return error == 0 ? Status::Ok() : CannotWrite(path, error);
}

std::string OutputFiles::Staged(const std::string& path) const {
  const Output* out = Find(path);
  if (out == nullptr) return "";
  return out->temp.empty() ? out->target : out->temp;
}

Status OutputFiles::Commit() {
  for (Output& o : outputs_) {
    if (o.temp.empty()) continue;
    if (rename(o.temp.c_str(), o.target.c_str()) != 0) {
      return CannotWrite(o.path, errno);
    }
    o.temp.clear();
  }
  committed_ = true;
  if (uses_stdout_ && !stdout_bytes_.empty()) {
    const size_t n =
        std::fwrite(stdout_bytes_.data(), 1, stdout_bytes_.size(), stdout);
    if (n != stdout_bytes_.size() || std::fflush(stdout) != 0) {
      return IoError("cannot write standard output: " + ErrnoText(errno));
    }
  }
  return Status::Ok();
}

}  // namespace strag::cli
