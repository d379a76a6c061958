// SPDX-License-Identifier: Apache-2.0
// Reader (and writer) for the job metadata file that accompanies an ops CSV
// (meta-*.yaml; docs/formats/ops-csv.md).

#ifndef STRAG_SRC_INGEST_OPS_CSV_META_YAML_H_
#define STRAG_SRC_INGEST_OPS_CSV_META_YAML_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "trace/job_meta.h"

namespace strag::ingest {

using ::strag::Result;

// Parses flat YAML with yaml-cpp: one map of `key: value` pairs whose
// values are scalars (plain, quoted or folded, on one line once read;
// comments, `---`, anchors and aliases of scalars are fine). Nested maps,
// lists, multi-line values, several documents and control characters are
// rejected with the line and the column.
//
// Keys read into the struct: dp_size -> dp, pp_size -> pp, tp_size -> tp,
// dsp_size or cp_size -> cp, vpp_size -> vpp, world_size, trial_name; the
// size keys must be positive integers. Every key, known or not, is also
// appended to `raw` in file order with its unquoted value (a written
// `null` or `~` keeps its text; `key:` alone is "").
//
// Errors are kInvalidInput naming `source_name` and the 1-based line, e.g.
// "meta.yaml: line 3: key 'dp_size': \"four\" is not an integer"; syntax
// errors also the column ("meta.yaml: line 3, column 3: key 'parallel':
// nested YAML is not supported ..."). Never throws.
Result<trace::JobMeta> ParseJobMetaYaml(std::string_view text,
                                        std::string_view source_name);

// The inverse of ParseJobMetaYaml for `meta.raw`: one `key: value` line
// per entry, in order, after a comment line naming the writer.
std::string WriteJobMetaYaml(const trace::JobMeta& meta,
                             std::string_view writer = "strag simulate");

}  // namespace strag::ingest

#endif  // STRAG_SRC_INGEST_OPS_CSV_META_YAML_H_
