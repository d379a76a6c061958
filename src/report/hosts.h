// SPDX-License-Identifier: Apache-2.0
// Host names of ranks, and the nodes they make: from the profiler's file
// names (tensorboard_trace_handler writes `<host>_<pid>.<time>.pt.trace.json`)
// or from a --hosts file. Without them a node is rank / gpus_per_node, an
// assumption the reports state (Topology::hosts empty).
//
// Pure: the file is read at the edge.

#ifndef STRAG_SRC_REPORT_HOSTS_H_
#define STRAG_SRC_REPORT_HOSTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "trace/topology.h"

namespace strag::report {

// Host name by global rank.
using HostMap = std::map<int32_t, std::string>;

// The host in a tensorboard_trace_handler file name: the base name up to
// its first '.', less a trailing `_<pid>` ("gpu-a12_4711.1733134.pt.trace.
// json" -> "gpu-a12"). nullopt when the name is not of that form.
std::optional<std::string> HostFromTraceFileName(std::string_view path);

// A --hosts file: one `RANK HOST` per line (a space, tab or comma between);
// blank lines and `#` comments are skipped. kInvalidInput naming the file
// and the line for anything else, or a rank given twice.
Result<HostMap> ParseHostsFile(std::string_view text, std::string_view source);

// Numbers the nodes of `topology` by host: node k is the k-th host in the
// order of its lowest traced rank. Every traced rank needs a host (else
// kInvalidInput naming `source` and the first rank without one); hosts of
// ranks that are not traced are ignored. Sets places[].node, `hosts` and
// `hosts_source`.
Status ApplyHosts(const HostMap& hosts, std::string_view source,
                  trace::Topology* topology);

}  // namespace strag::report

#endif  // STRAG_SRC_REPORT_HOSTS_H_
