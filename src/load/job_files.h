// SPDX-License-Identifier: Apache-2.0
// A job's input files read into report::ReportInput: one ops CSV (with its
// metadata YAML, found beside it or given), or Kineto traces (files or a
// folder). The edge that `strag analyze` / `strag plan` and the Python
// module share, so that both read a job the same way; the options and the
// order of the checks stay theirs (flags, keyword arguments).

#ifndef STRAG_SRC_LOAD_JOB_FILES_H_
#define STRAG_SRC_LOAD_JOB_FILES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/collective.h"
#include "base/status.h"
#include "ingest/common/input_limits.h"
#include "report/report.h"
#include "trace/job_meta.h"
#include "trace/ops_table.h"

namespace strag::load {

// The most a metadata YAML may hold.
inline constexpr size_t kMaxMetaFileBytes = size_t{64} << 20;

// True when `inputs` are profiler traces: not empty, and each a folder or a
// `.json` / `.json.gz` file.
bool IsKinetoJob(const std::vector<std::string>& inputs);

// The metadata of an ops CSV: meta-X.yaml for trace-X.csv[.gz], else
// meta.yaml in the same folder; "" when neither exists.
std::string FindMeta(const std::string& trace);

// The job metadata YAML at `path` (default metadata for "").
Result<trace::JobMeta> ReadMeta(const std::string& path);

// What to read, and how.
struct JobRead {
  std::vector<std::string> inputs;  // one ops CSV, or Kineto traces
  trace::JobMeta meta = {};         // read, layout flags applied
  // Kineto: the metadata's dp and pp lay the ranks out (given by flags or
  // a metadata file); else the layout is inferred from the p2p ops.
  bool layout_given = false;
  std::map<std::string, int32_t> rank_map = {};  // Kineto: file -> rank
  // `RANK HOST` lines (report/hosts.h), or "": nodes from host names in the
  // trace file names, else rank / gpus_per_node.
  std::string hosts_file = {};
  ingest::InputLimits limits = {};
  // Kineto files read at once, threads preparing an ops CSV; 0: one per core
  size_t threads = 0;
  // Under mpirun (several processes): Kineto files are read by shares and
  // exchanged (ReadKinetoJob).
  Collective* collective = nullptr;
};

// Reads the job. kInvalidInput for inputs that are neither one ops CSV nor
// Kineto traces, and whatever the reader says about a file. An ops CSV's
// table goes to `*table` when given (else it is released: the prepared
// arrays are all the analysis needs); Kineto inputs leave it untouched.
// Warnings about skipped Kineto files are in the result's notes.
Result<report::ReportInput> ReadJob(JobRead read,
                                    trace::OpsTable* table = nullptr);

// Applies the `RANK HOST` file at `path` (nothing for "") to the input's
// topology: what ReadJob does last, and a job read in windows needs on its
// shape.
Status ApplyHostsFile(const std::string& path, report::ReportInput* in);

}  // namespace strag::load

#endif  // STRAG_SRC_LOAD_JOB_FILES_H_
