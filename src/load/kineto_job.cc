// SPDX-License-Identifier: Apache-2.0
#include "load/kineto_job.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include "base/parallel_for.h"
#include "ingest/kineto/kineto_file.h"

namespace strag::load {
namespace {

namespace fs = std::filesystem;

Result<std::vector<std::string>> ListFiles(
    const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(std::vector<std::string> found,
                     ingest::ListKinetoInputs(path));
    files.insert(files.end(), found.begin(), found.end());
  }
  if (files.empty()) {
    return InvalidInput("no *.json or *.json.gz trace in " + paths.front());
  }
  return files;
}

}  // namespace

bool IsKinetoInput(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  return path.ends_with(".json") || path.ends_with(".json.gz");
}

Result<report::ReportInput> ReadKinetoJob(const std::vector<std::string>& paths,
                                          size_t threads,
                                          report::ProfilerInputOptions options,
                                          const ingest::InputLimits& limits) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ListFiles(paths));
  std::vector<std::optional<trace::RankTrace>> read(files.size());
  std::vector<Status> errors(files.size(), Status::Ok());
  // One file that names no rank (no distributedInfo, no rank in its name,
  // e.g. a single-GPU job) is rank 0; among several, ProfilerInput numbers
  // them.
  ingest::ReadKinetoOptions reading;
  reading.parse.default_rank =
      files.size() == 1 ? 0 : ingest::KinetoOptions::kRankLater;
  reading.parse.limits = limits;
  ParallelFor(files.size(), std::max<size_t>(1, threads),
              [&](size_t k, size_t) {
                auto r = ingest::ReadKinetoFile(files[k], reading);
                if (r.ok()) {
                  read[k] = std::move(r).value();
                } else {
                  errors[k] = r.status();
                }
              });
  // One file: its own error, one line, as for an ops CSV.
  if (files.size() == 1 && !errors[0].ok()) return errors[0];
  for (const Status& e : errors) {
    if (e.ok()) continue;
    // Bad input skips its file; running out of memory (or a bug) is no
    // property of the file and ends the command.
    if (e.code() != StatusCode::kInvalidInput &&
        e.code() != StatusCode::kNotFound) {
      return e;
    }
    options.notes.warnings.push_back(e.message() + ": file skipped");
    options.read_errors += "\n  " + e.message();
  }
  return report::ProfilerInput(std::move(read), std::move(options));
}

}  // namespace strag::load
