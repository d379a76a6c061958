// SPDX-License-Identifier: Apache-2.0
#include "load/kineto_job.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/byte_pack.h"
#include "base/collective.h"
#include "base/parallel_for.h"
#include "ingest/kineto/kineto_file.h"
#include "trace/rank_trace_pack.h"

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

// The traces and errors of files [share.first, share.end) that one process
// packed (below) into `read` and `errors`.
Status UnpackShare(std::string_view bytes, Share share,
                   std::vector<std::optional<trace::RankTrace>>* read,
                   std::vector<Status>* errors) {
  ByteUnpacker in(bytes);
  for (size_t k = share.first; k < share.end; ++k) {
    if (in.Get<uint8_t>() == 1) {
      ASSIGN_OR_RETURN((*read)[k], trace::UnpackRankTrace(&in));
    } else {
      const auto code = static_cast<StatusCode>(in.Get<int32_t>());
      const std::vector<char> message = in.GetArray<char>();
      (*errors)[k] = Status(code, std::string(message.begin(), message.end()));
    }
  }
  if (!in.done()) return Internal("ReadKinetoJob: damaged traces");
  return Status::Ok();
}

// Every process's traces and errors of its share of the files ([k] set
// for its k), gathered on every process into `read` and `errors`. A file is
// packed as a byte (1: read), then its trace, or its error's code and
// message.
Status ShareTraces(Collective* collective,
                   std::vector<std::optional<trace::RankTrace>>* read,
                   std::vector<Status>* errors) {
  const size_t files = read->size();
  const size_t processes = collective->size();
  const Share mine = ShareOf(files, collective->rank(), processes);
  BytePacker out;
  for (size_t k = mine.first; k < mine.end; ++k) {
    out.Put<uint8_t>((*read)[k].has_value() ? 1 : 0);
    if ((*read)[k]) {
      trace::PackRankTrace(*(*read)[k], &out);
    } else {
      out.Put<int32_t>(static_cast<int32_t>((*errors)[k].code()));
      out.PutArray<char>((*errors)[k].message());
    }
  }
  ASSIGN_OR_RETURN(std::vector<std::string> gathered,
                   collective->AllGather(out.Take()));
  for (size_t p = 0; p < processes; ++p) {
    if (p != collective->rank()) {  // its own are in place
      RETURN_IF_ERROR(
          UnpackShare(gathered[p], ShareOf(files, p, processes), read, errors));
    }
    std::string().swap(gathered[p]);  // unpacked: its bytes are not needed
  }
  return Status::Ok();
}

}  // namespace

bool IsKinetoInput(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  return path.ends_with(".json") || path.ends_with(".json.gz");
}

bool ReadsKinetoByShares(size_t files, const Collective* collective) {
  return collective != nullptr && collective->size() > 1 && files > 1;
}

Result<report::ReportInput> ReadKinetoJob(const std::vector<std::string>& paths,
                                          size_t threads,
                                          report::ProfilerInputOptions options,
                                          const ingest::InputLimits& limits,
                                          Collective* collective) {
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
  // Under mpirun each process reads its share of the files, then every
  // process gets every file's trace or error, as if it had read them all.
  const bool shared = ReadsKinetoByShares(files.size(), collective);
  const Share mine =
      shared ? ShareOf(files.size(), collective->rank(), collective->size())
             : Share{0, files.size()};
  ParallelFor(mine.end - mine.first, std::max<size_t>(1, threads),
              [&](size_t i, size_t) {
                const size_t k = mine.first + i;
                auto r = ingest::ReadKinetoFile(files[k], reading);
                if (r.ok()) {
                  read[k] = std::move(r).value();
                } else {
                  errors[k] = r.status();
                }
              });
  if (shared) RETURN_IF_ERROR(ShareTraces(collective, &read, &errors));
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
