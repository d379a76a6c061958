// SPDX-License-Identifier: Apache-2.0
// The published traces (trace-AR/ST/SE with their metadata) for the whatif
// tests, read from the shared data when it is present.

#ifndef STRAG_SRC_WHATIF_PUBLISHED_TRACES_TEST_UTIL_H_
#define STRAG_SRC_WHATIF_PUBLISHED_TRACES_TEST_UTIL_H_

#include <filesystem>
#include <string>

#include "base/status.h"
#include "ingest/common/file.h"
#include "ingest/ops_csv/meta_yaml.h"
#include "ingest/ops_csv/ops_csv_file.h"
#include "trace/job_meta.h"
#include "trace/ops_table.h"

namespace strag::whatif {

inline std::string PublishedTracesDir() {
  return STRAG_SHARED_DATA_DIR "/osdi25-whatif";
}

// Whether the published traces are there (else the caller skips, saying
// so with PublishedTracesDir()).
inline bool HavePublishedTraces() {
  return std::filesystem::exists(PublishedTracesDir() + "/trace-AR.csv.gz");
}

// trace-NAME.csv.gz and meta-NAME.yaml.
inline Status ReadPublishedTrace(const std::string& name,
                                 trace::OpsTable* table,
                                 trace::JobMeta* meta) {
  const std::string dir = PublishedTracesDir();
  const std::string meta_path = dir + "/meta-" + name + ".yaml";
  ASSIGN_OR_RETURN(const std::string text, ingest::ReadFile(meta_path));
  ASSIGN_OR_RETURN(*meta, ingest::ParseJobMetaYaml(text, meta_path));
  ASSIGN_OR_RETURN(*table,
                   ingest::ReadOpsCsvFile(dir + "/trace-" + name + ".csv.gz"));
  return Status::Ok();
}

}  // namespace strag::whatif

#endif  // STRAG_SRC_WHATIF_PUBLISHED_TRACES_TEST_UTIL_H_
