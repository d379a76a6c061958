// SPDX-License-Identifier: Apache-2.0
// What `strag.analyze()` does, in C++ and without Python: the options of
// `strag analyze` (and `strag plan`) as typed values, checked in the CLI's
// order with its messages (named after the keyword argument instead of the
// flag), the job read by load/ and analysed by report::BuildReport, the
// report rendered by the CLI's own renderers (so that the dicts equal the
// CLI's --json). strag_module.cc converts keyword arguments and results.

#ifndef STRAG_PYTHON_ANALYZE_H_
#define STRAG_PYTHON_ANALYZE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "report/report.h"
#include "trace/ops_table.h"

namespace strag::python {

// The options of `strag analyze`, one per flag (docs: python/README.md).
struct AnalyzeArgs {
  std::vector<std::string> inputs;  // one ops CSV, or Kineto traces
  std::optional<std::string> meta;  // --meta; default: found beside it
  std::optional<int64_t> dp, pp, tp, cp, vpp;
  std::map<std::string, int64_t> rank_map;  // --rank-map (Kineto)
  std::optional<std::string> hosts;         // --hosts FILE
  std::vector<std::string> fix, unfix;
  std::optional<std::string> pool;
  std::optional<int64_t> threads, gpus;
  std::optional<double> days, hours, usd_per_gpu_hour;
  bool plan = false;                  // --plan (strag plan: always)
  std::optional<std::string> layers;  // "8,8,9,7" or "64"
  std::optional<double> checkpoint_interval_min, restart_min;
  std::optional<int64_t> token_cap;
  std::optional<int64_t> max_line_bytes, max_token_bytes, max_event_bytes;
};

struct Analysis {
  report::Report report;
  std::string json;       // strag.analysis/1, as `strag analyze --json`
  std::string plan_json;  // strag.plan/1 when planned, else ""
  // The ops table of an ops CSV input; empty for Kineto traces.
  trace::OpsTable ops;
  // What the CLI prints as "strag: warning: ..." (skipped Kineto files,
  // metadata the trace contradicts).
  std::vector<std::string> warnings;
};

// Reads, analyses and renders. kInvalidInput (bad options, bad input, a
// file's error with its path) and kNotFound as the CLI reports them.
Result<Analysis> Analyze(const AnalyzeArgs& args);

}  // namespace strag::python

#endif  // STRAG_PYTHON_ANALYZE_H_
