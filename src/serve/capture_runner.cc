// SPDX-License-Identifier: Apache-2.0
#include "serve/capture_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

extern char** environ;

namespace strag::serve {
namespace {

// Runs argv with stdout and stderr into `log`; the exit status, or -1.
int Run(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(),
                             environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The on-call block of `strag analyze`'s summary: from "job utilization"
// to the first blank line.
std::string OnCallBlock(const std::string& summary) {
  const size_t start = summary.find("job utilization");
  const size_t from = start == std::string::npos ? 0 : summary.rfind('\n', start) + 1;
  const size_t end = summary.find("\n\n", from);
  return summary.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

}  // namespace

CaptureRunner::CaptureRunner(std::string dir, std::string strag_exe)
    : dir_(std::move(dir)), exe_(std::move(strag_exe)) {}

CaptureRunner::CaptureRunner(CaptureRunner&& other) noexcept
    : dir_(std::move(other.dir_)),
      exe_(std::move(other.exe_)),
      mu_(std::move(other.mu_)),
      running_(std::move(other.running_)) {}

CaptureRunner& CaptureRunner::operator=(CaptureRunner&& other) noexcept {
  if (this != &other) {
    Join();
    dir_ = std::move(other.dir_);
    exe_ = std::move(other.exe_);
    mu_ = std::move(other.mu_);
    running_ = std::move(other.running_);
  }
  return *this;
}

CaptureRunner::~CaptureRunner() { Join(); }

Result<std::string> CaptureRunner::SaveTrace(const std::string& job,
                                             const std::string& id,
                                             int32_t rank,
                                             const std::string& trace) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(dir_) / job / id;
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return IoError("cannot create " + folder.string() + ": " + ec.message());
  const fs::path file = folder / ("rank-" + std::to_string(rank) + ".json");
  std::ofstream out(file, std::ios::binary);
  out.write(trace.data(), static_cast<std::streamsize>(trace.size()));
  out.close();
  if (!out) return IoError("cannot write " + file.string());
  return folder.string();
}

void CaptureRunner::Analyse(const std::string& folder, Done done) {
  if (!mu_) return;
  std::lock_guard<std::mutex> guard(*mu_);
  if (exe_.empty()) {
    done("failed", "no strag executable to analyse with");
    return;
  }
  running_.emplace_back([exe = exe_, folder, done = std::move(done)] {
    const std::string summary = folder + "/summary.txt";
    const int rc = Run({exe, "analyze", folder, "--html", folder + "/report.html",
                        "--json", folder + "/report.json"},
                       summary);
    const std::string text = ReadText(summary);
    if (rc == 0) {
      done("analysed", OnCallBlock(text));
    } else {
      done("failed", "strag analyze exited with " + std::to_string(rc) + ": " +
                         text.substr(0, 2000));
    }
  });
}

void CaptureRunner::Join() {
  if (!mu_) return;
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> guard(*mu_);
    threads.swap(running_);
  }
  for (std::thread& t : threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace strag::serve
