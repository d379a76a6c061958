// SPDX-License-Identifier: Apache-2.0
#include "cli/simulate_csv.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "ingest/common/parallel_gzip_writer.h"
#include "ingest/ops_csv/ops_csv_writer.h"
#include "sim/ops_table_stream.h"

namespace strag::cli {
namespace {

// Rows rendered at once: a batch of the table stays in cache while it is
// turned into text.
constexpr size_t kBatchRows = 4096;

Status CannotWrite(const std::string& path, int error) {
  return IoError("cannot write " + path + ": " + std::strerror(error));
}

// The staged file of an output, appended to by the gzip writer's sink.
class StagedFile {
 public:
  ~StagedFile() {
    if (fd_ >= 0) close(fd_);
  }
  Status Open(const std::string& path, OutputFiles* out) {
    path_ = path;
    // Creates the temporary file (or truncates a special one) and names it.
    RETURN_IF_ERROR(out->Write(path, ""));
    fd_ = open(out->Staged(path).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    return fd_ < 0 ? CannotWrite(path, errno) : Status::Ok();
  }
  Status Write(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return CannotWrite(path_, n < 0 ? errno : EIO);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }
  Status Close() {
    const int fd = fd_;
    fd_ = -1;
    return close(fd) != 0 ? CannotWrite(path_, errno) : Status::Ok();
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Renders a batch of rows (the header before the first) into the writer.
Status Render(const trace::OpsTable& table, bool* header,
              ingest::ParallelGzipWriter* gz) {
  if (!*header) {
    ingest::AppendOpsCsvHeader(table, gz->text());
    *header = true;
  }
  ingest::AppendOpsCsvRows(table, 0, table.size(), gz->text());
  return gz->MaybeSubmit();
}

}  // namespace

Result<StreamedCsv> SimulateToOpsCsv(const sim::JobSpec& spec,
                                     const sim::SimulateOptions& options,
                                     int64_t first_step, int64_t last_step,
                                     const std::string& path,
                                     OutputFiles* out) {
  StagedFile file;
  RETURN_IF_ERROR(file.Open(path, out));
  ingest::ParallelGzipWriter gz(
      [&](std::string_view bytes) { return file.Write(bytes); });
  std::optional<sim::OpsTableStream> stream;  // needs the job's schedule
  trace::OpsTable batch;
  bool header = false;
  auto render = [&](const trace::OpsTable& table) {
    return Render(table, &header, &gz);
  };
  StreamedCsv result;
  ASSIGN_OR_RETURN(
      result.job,
      sim::SimulateInWindows(
          spec, options, [&](const sim::SimulatedJob& window) -> Status {
            if (!stream) stream.emplace(window, first_step, last_step);
            return stream->Add(window, kBatchRows, &batch, render);
          }));
  if (batch.size() > 0) RETURN_IF_ERROR(render(batch));
  RETURN_IF_ERROR(gz.Finish());
  RETURN_IF_ERROR(file.Close());
  result.rows = stream ? static_cast<int64_t>(stream->rows()) : 0;
  result.text_bytes = gz.text_bytes();
  result.gzip_bytes = gz.compressed_bytes();
  return result;
}

Status WriteOpsCsvGzip(const trace::OpsTable& table, const std::string& path,
                       OutputFiles* out) {
  std::string gz_bytes;
  ingest::ParallelGzipWriter gz([&](std::string_view bytes) {
    gz_bytes.append(bytes);
    return Status::Ok();
  });
  RETURN_IF_ERROR(gz.Append(ingest::WriteOpsCsv(table)));
  RETURN_IF_ERROR(gz.Finish());
  return out->Write(path, gz_bytes);
}

}  // namespace strag::cli
