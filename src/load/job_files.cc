// SPDX-License-Identifier: Apache-2.0
#include "load/job_files.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "base/parallel_for.h"
#include "ingest/common/file.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "load/kineto_job.h"
#include "report/hosts.h"
#include "report/inputs.h"

namespace strag::load {

namespace fs = std::filesystem;

bool IsKinetoJob(const std::vector<std::string>& inputs) {
  return !inputs.empty() &&
         std::all_of(inputs.begin(), inputs.end(), IsKinetoInput);
}

std::string FindMeta(const std::string& trace) {
  const fs::path path(trace);
  std::string name = path.filename().string();
  for (const char* ext : {".gz", ".csv"}) {
    if (name.size() > std::string(ext).size() && name.ends_with(ext)) {
      name.resize(name.size() - std::string(ext).size());
    }
  }
  std::vector<fs::path> candidates;
  if (name.starts_with("trace-")) {
    candidates.push_back(path.parent_path() /
                         ("meta-" + name.substr(6) + ".yaml"));
  }
  candidates.push_back(path.parent_path() / "meta.yaml");
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::exists(c, ec)) return c.string();
  }
  return "";
}

Result<trace::JobMeta> ReadMeta(const std::string& path) {
  if (path.empty()) return trace::JobMeta();
  ASSIGN_OR_RETURN(std::string text, ingest::ReadFile(path, kMaxMetaFileBytes));
  return ingest::ParseJobMetaYaml(text, path);
}

namespace {

// The job as its files say, before --hosts.
Result<report::ReportInput> ReadJobFiles(JobRead& read,
                                         trace::OpsTable* table) {
  const bool kineto = IsKinetoJob(read.inputs);
  if (read.inputs.empty() || (read.inputs.size() > 1 && !kineto)) {
    return InvalidInput(
        "needs one ops CSV, or Kineto traces (files or a folder)");
  }
  const std::string& source = read.inputs[0];
  const trace::JobMeta& meta = read.meta;
  if (kineto) {
    report::ProfilerInputOptions options{
        .source = source,
        .meta = meta,
        .layout = {.dp = read.layout_given ? meta.dp : 0,
                   .pp = read.layout_given ? meta.pp : 0,
                   .tp = meta.tp,
                   .cp = meta.cp,
                   .gpus_per_node = report::GpusPerNode(meta)},
        .rank_map = std::move(read.rank_map)};
    return ReadKinetoJob(read.inputs,
                         read.threads ? read.threads : HardwareThreads(),
                         std::move(options), read.limits, read.collective);
  }
  // Without a caller for the table, only the analysis reads it, and it
  // reads durations as binary32 seconds, keys by runs of rows and
  // microbatches only with the sequence lengths: no nanosecond durations,
  // no key columns, microbatches only beside extra columns.
  const bool own = table == nullptr;
  ASSIGN_OR_RETURN(trace::OpsTable ops,
                   ingest::ReadOpsCsvFile(source, {.limits = read.limits,
                                                   .ns_durations = !own,
                                                   .key_runs = own,
                                                   .microbatches = !own}));
  if (table == nullptr) {  // the table goes: released while preparing
    return report::OpsTableInputReleasing(&ops, meta, source, read.threads);
  }
  ASSIGN_OR_RETURN(report::ReportInput in,
                   report::OpsTableInput(ops, meta, source, read.threads));
  *table = std::move(ops);
  return in;
}

}  // namespace

// The --hosts file applied to the job's topology (it wins over host names
// in trace file names).
Status ApplyHostsFile(const std::string& path, report::ReportInput* in) {
  if (path.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(const std::string text,
                   ingest::ReadFile(path, kMaxMetaFileBytes));
  ASSIGN_OR_RETURN(const report::HostMap hosts,
                   report::ParseHostsFile(text, path));
  return report::ApplyHosts(hosts, "--hosts " + path, &in->prepared.topology);
}

Result<report::ReportInput> ReadJob(JobRead read, trace::OpsTable* table) {
  ASSIGN_OR_RETURN(report::ReportInput in, ReadJobFiles(read, table));
  RETURN_IF_ERROR(ApplyHostsFile(read.hosts_file, &in));
  return in;
}

}  // namespace strag::load
