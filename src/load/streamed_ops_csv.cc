// SPDX-License-Identifier: Apache-2.0
#include "load/streamed_ops_csv.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <utility>
#include <vector>

#include "base/parallel_for.h"
#include "ingest/common/text_blocks.h"
#include "ingest/common/text_reader.h"
#include "ingest/ops_csv/ops_csv_parser.h"
#include "load/step_sorter.h"

namespace strag::load {
namespace {

Status WriteAll(std::FILE* f, const void* data, size_t bytes,
                const std::string& path) {
  if (bytes != 0 && std::fwrite(data, 1, bytes, f) != bytes) {
    return Internal(path + ": cannot write the spill file: " +
                    std::strerror(errno));
  }
  return Status::Ok();
}

Status ReadAll(std::FILE* f, void* data, size_t bytes,
               const std::string& path) {
  if (bytes != 0 && std::fread(data, 1, bytes, f) != bytes) {
    return Internal(path + ": cannot read the spill file back");
  }
  return Status::Ok();
}

template <typename T>
Status WriteVector(std::FILE* f, const T& v, const std::string& path) {
  return WriteAll(f, v.data(), v.size() * sizeof(v[0]), path);
}

// Windows being cut from the rows as they are parsed, prepared and
// spilled (or held).
class Spiller {
 public:
  // Spills to `spill`, or with `held`, keeps the windows there.
  Spiller(const std::string& source, const trace::JobMeta& meta,
          const StreamOptions& options, std::FILE* spill,
          std::string spill_path, std::vector<whatif::PreparedTrace>* held,
          whatif::PreparedTrace* shape, StreamedJob* job)
      : source_(source),
        meta_(meta),
        options_(options),
        spill_(spill),
        spill_path_(std::move(spill_path)),
        held_(held),
        shape_(shape),
        job_(job) {}

  // Takes a batch of parsed rows (in file order).
  Status Add(const trace::OpsTable& rows) {
    for (size_t r = 0; r < rows.size(); ++r) {
      if (rows.step[r] < last_step_) {
        // The caller reads the file again through the sort: this status
        // only stops the first reading.
        disordered_ = true;
        return InvalidInput(source_ + ": rows out of step order");
      }
      last_step_ = rows.step[r];
    }
    pending_.AppendRows(rows, 0, rows.size());
    // A window ends where its last step does: the pending rows' last step
    // may go on in the next batch, so it is kept.
    while (pending_.size() >= options_.window_ops &&
           pending_.step.front() != pending_.step.back()) {
      const int64_t open_step = pending_.step.back();
      const size_t cut = static_cast<size_t>(
          std::lower_bound(pending_.step.begin(), pending_.step.end(),
                           open_step) -
          pending_.step.begin());
      RETURN_IF_ERROR(Flush(cut));
    }
    return Status::Ok();
  }

  // Whether Add failed on a row of an earlier step than the one before.
  bool disordered() const { return disordered_; }

  Status Finish() {
    if (pending_.size() == 0 && job_->num_windows == 0) {
      return InvalidInput(source_ + ": the trace has no ops");
    }
    if (pending_.size() > 0) RETURN_IF_ERROR(Flush(pending_.size()));
    return Status::Ok();
  }

 private:
  // Prepares and spills (or holds) the first `count` pending rows (whole
  // steps). The window's rows are the pending table cut at `count`: only
  // the rest (the open step, at most a step's rows) waits in `carry_`
  // meanwhile, and comes back to the pending table, whose columns (and so
  // their memory, already touched) the next window's rows reuse. One table
  // of a window's rows is held, not two (the windows held in memory of an
  // 8.6M-op job: 431 -> 333 MB, llama-16k 357 -> 299 MB).
  Status Flush(size_t count) {
    carry_.ClearRows();
    carry_.AppendRows(pending_, count, pending_.size());
    pending_.Truncate(count);
    const Status status = Prepare(pending_);
    pending_.ClearRows();
    pending_.AppendRows(carry_, 0, carry_.size());
    return status;
  }

  // Prepares the window of `rows` (whole steps) and spills or holds it.
  Status Prepare(const trace::OpsTable& rows) {
    whatif::PreparedTrace& shape = *shape_;
    if (job_->num_windows == 0) {
      Result<whatif::PreparedTrace> first = whatif::PrepareShape(rows, meta_);
      if (!first.ok()) return first.status().WithContext(source_);
      shape = std::move(first).value();
      shape.steps.clear();
    }
    const size_t first_step = shape.steps.size();
    for (int64_t s : rows.step) {
      if (shape.steps.size() == first_step || shape.steps.back() != s) {
        shape.steps.push_back(s);
      }
    }
    const size_t count_steps = shape.steps.size() - first_step;
    Result<whatif::PreparedTrace> window =
        whatif::PrepareWindow(shape, rows, first_step, count_steps);
    if (!window.ok()) return window.status().WithContext(source_);
    job_->ops += rows.size();
    job_->num_windows += 1;
    if (held_ != nullptr) {  // kept in memory: 16 bytes per op
      whatif::PreparedTrace& w = held_->emplace_back(std::move(window).value());
      w.row = {};
      return Status::Ok();
    }
    const whatif::PreparedTrace& w = *window;
    const uint64_t header[2] = {count_steps, w.num_nodes() * w.num_instances()};
    RETURN_IF_ERROR(WriteAll(spill_, header, sizeof header, spill_path_));
    RETURN_IF_ERROR(WriteVector(spill_, w.step_t_base, spill_path_));
    RETURN_IF_ERROR(WriteVector(spill_, w.start, spill_path_));
    RETURN_IF_ERROR(WriteVector(spill_, w.launch_delay, spill_path_));
    RETURN_IF_ERROR(WriteVector(spill_, w.cost, spill_path_));
    job_->spill_bytes += sizeof header + header[1] * (4 + 4 + 8) +
                         count_steps * sizeof(float);
    return Status::Ok();
  }

  const std::string& source_;
  const trace::JobMeta& meta_;
  const StreamOptions& options_;
  std::FILE* spill_;  // or, when held_ is set, none
  std::string spill_path_;
  std::vector<whatif::PreparedTrace>* held_ = nullptr;
  whatif::PreparedTrace* shape_;
  StreamedJob* job_;
  trace::OpsTable pending_, carry_;
  int64_t last_step_ = INT64_MIN;
  bool disordered_ = false;
};

}  // namespace

SpilledWindows::SpilledWindows(whatif::PreparedTrace shape, std::FILE* spill,
                               std::string path)
    : shape_(std::move(shape)), spill_(spill), path_(std::move(path)) {
  window_.layout = shape_.layout;
  window_.model = shape_.model;
  window_.dp = shape_.dp;
  window_.pp = shape_.pp;
  window_.vpp = shape_.vpp;
  window_.workers = shape_.workers;
  window_.worker_rank = shape_.worker_rank;
  window_.topology = shape_.topology;
}

SpilledWindows::~SpilledWindows() {
  if (spill_ != nullptr) std::fclose(spill_);
}

Status SpilledWindows::ForEachWindow(
    const std::function<Status(const whatif::PreparedTrace&)>& fn) {
  std::rewind(spill_);
  size_t first_step = 0;
  while (first_step < shape_.steps.size()) {
    uint64_t header[2];
    RETURN_IF_ERROR(ReadAll(spill_, header, sizeof header, path_));
    const auto steps = static_cast<size_t>(header[0]);
    const auto slots = static_cast<size_t>(header[1]);
    const auto from =
        shape_.steps.begin() + static_cast<ptrdiff_t>(first_step);
    window_.steps.assign(from, from + static_cast<ptrdiff_t>(steps));
    window_.step_t_base.resize(steps);
    window_.start.resize(slots);
    window_.launch_delay.resize(slots);
    window_.cost.resize(slots);
    RETURN_IF_ERROR(ReadAll(spill_, window_.step_t_base.data(),
                            steps * sizeof(float), path_));
    RETURN_IF_ERROR(
        ReadAll(spill_, window_.start.data(), slots * sizeof(float), path_));
    RETURN_IF_ERROR(ReadAll(spill_, window_.launch_delay.data(),
                            slots * sizeof(float), path_));
    RETURN_IF_ERROR(
        ReadAll(spill_, window_.cost.data(), slots * sizeof(double), path_));
    RETURN_IF_ERROR(fn(window_));
    first_step += steps;
  }
  return Status::Ok();
}

namespace {

// Parses the ops CSV at `path` in batches of rows, each to `sink`. A sink
// error for which `stop` says true ends the reading at once (else the rest
// of a gzip stream is still inflated, to report its damage first).
Status ReadRows(
    const std::string& path, const StreamOptions& options,
    const std::function<Status(const trace::OpsTable&)>& sink,
    const std::function<bool()>& stop = [] { return false; }) {
  const size_t threads =
      options.threads == 0 ? HardwareThreads() : options.threads;
  // Blocks of 4 parts per thread: thread starts are few.
  const size_t block_bytes = 8 * threads * ingest::OpsCsvParser::kMinPartBytes;
  ASSIGN_OR_RETURN(
      std::unique_ptr<ingest::TextReader> reader,
      ingest::TextReader::Open(path, block_bytes, options.gzip_engine));
  // No size hint: the columns hold one batch at a time, not the file.
  ingest::OpsCsvParser parser(path, 0, options.limits.max_line_bytes,
                              threads);
  parser.DropExtraColumns();
  const ingest::TextBlockOptions block_options{
      .block_bytes = block_bytes,
      .inflate_on_thread = true,
      .sink_refused = [&] { return parser.refused() || stop(); }};
  trace::OpsTable rows;  // one batch at a time, its memory reused
  const auto feed = [&](std::string_view block) -> Status {
    RETURN_IF_ERROR(parser.Feed(block));
    parser.TakeRows(&rows);
    return sink(rows);
  };
  RETURN_IF_ERROR(ingest::ForEachTextBlock(reader.get(), block_options, feed));
  ASSIGN_OR_RETURN(const trace::OpsTable last, parser.Finish());
  return sink(last);
}

}  // namespace

Result<StreamedJob> StreamOpsCsv(const std::string& path,
                                 const trace::JobMeta& meta,
                                 const StreamOptions& options) {
  // The spill file: created and unlinked at once, so nothing is left
  // behind whatever happens.
  std::string spill_path;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> spill(nullptr, &std::fclose);
  if (!options.hold) {
    spill_path = options.spill_dir + "/strag-spill-XXXXXX";
    const int fd = mkstemp(spill_path.data());
    if (fd < 0) {
      return InvalidInput(options.spill_dir +
                          ": cannot create a spill file there: " +
                          std::strerror(errno) + " (--spill-dir to change)");
    }
    unlink(spill_path.c_str());
    spill.reset(fdopen(fd, "w+b"));
    if (spill == nullptr) {
      close(fd);
      return Internal("cannot open the spill file");
    }
  }
  StreamedJob job;
  whatif::PreparedTrace shape;
  std::vector<whatif::PreparedTrace> held;
  const auto new_spiller = [&] {
    return std::make_unique<Spiller>(path, meta, options, spill.get(),
                                     spill_path, options.hold ? &held : nullptr,
                                     &shape, &job);
  };
  auto spiller = new_spiller();
  // Rows grouped by step go straight to the windows. Rows out of step
  // order (a trace written rank by rank) are only found on the way: the
  // file is then read again through an external sort, or left to the
  // caller.
  // Rows out of order end this first reading at once: the second one (or
  // the caller's) reads the whole file.
  Status direct = ReadRows(
      path, options,
      [&](const trace::OpsTable& rows) { return spiller->Add(rows); },
      [&] { return spiller->disordered(); });
  if (!direct.ok() && spiller->disordered()) {
    if (!options.sort) return StreamedJob();
    if (spill != nullptr) {
      if (ftruncate(fileno(spill.get()), 0) != 0) {
        return Internal(spill_path + ": cannot reset the spill file");
      }
      std::rewind(spill.get());
    }
    held.clear();
    job = StreamedJob();
    shape = whatif::PreparedTrace();
    spiller = new_spiller();
    StepSorter sorter(options.spill_dir, options.window_ops);
    RETURN_IF_ERROR(ReadRows(path, options, [&](const trace::OpsTable& rows) {
      return sorter.Add(rows);
    }));
    RETURN_IF_ERROR(sorter.Merge(
        [&](const trace::OpsTable& rows) { return spiller->Add(rows); }));
    job.sorted = true;
    job.sort_bytes = sorter.spilled_bytes();
  } else {
    RETURN_IF_ERROR(direct);
  }
  RETURN_IF_ERROR(spiller->Finish());
  if (options.hold) {
    job.shape = std::move(shape);
    job.windows = std::make_unique<HeldWindows>(std::move(held));
    return job;
  }
  if (std::fflush(spill.get()) != 0) {
    return Internal(spill_path + ": cannot write the spill file: " +
                    std::strerror(errno));
  }
  job.shape = shape;
  job.windows = std::make_unique<SpilledWindows>(
      std::move(shape), spill.release(), spill_path);
  return job;
}

}  // namespace strag::load
