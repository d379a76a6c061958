// SPDX-License-Identifier: Apache-2.0
// Topology: where each traced worker sits in the job's parallel layout
// (DP replica, PP stage, TP and CP rank, node), whatever the input.
//
// The ops CSV states it (dp_rank, stage, rank columns); profiler traces
// infer it (graph/generic/layout_inference.h) or take it from flags. Every
// consumer (diagnosis, reports) asks the topology instead of branching on
// the input's kind. Global ranks follow Megatron-LM's order (TP fastest,
// then CP, DP, PP): rank = ((pp * DP + dp) * CP + cp) * TP + tp.

#ifndef STRAG_SRC_TRACE_TOPOLOGY_H_
#define STRAG_SRC_TRACE_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace strag::trace {

struct RankPlace {
  int32_t rank = 0;
  int32_t dp = 0, pp = 0, tp = 0, cp = 0;
  int32_t node = 0;
};

struct Topology {
  int32_t dp = 1, pp = 1, tp = 1, cp = 1;
  // One per traced worker, in the order of the analysis' workers (by rank).
  std::vector<RankPlace> places;
  // How it was found, for reports: "ops CSV columns", "flags --dp 2 --pp 4",
  // "p2p chain: 2 pipelines of 4 stages", "none: each rank its own replica".
  std::string source;
  // False when nothing says how ranks relate (each rank its own replica).
  bool known = false;
  // Host names by node (RankPlace::node indexes them) when the input names
  // the hosts, and where from ("trace file names", "--hosts hosts.txt");
  // empty otherwise: then a node is rank / gpus_per_node, assumed.
  std::vector<std::string> hosts;
  std::string hosts_source;

  // The host of a node, or "" when hosts are not known.
  std::string HostOf(int32_t node) const {
    return node >= 0 && static_cast<size_t>(node) < hosts.size()
               ? hosts[static_cast<size_t>(node)]
               : std::string();
  }

  // The place of a global rank, or nullptr when it is not traced.
  const RankPlace* Find(int32_t rank) const {
    for (const RankPlace& p : places) {
      if (p.rank == rank) return &p;
    }
    return nullptr;
  }
};

// The place of `rank` in a DP x PP x TP x CP layout of Megatron's order.
inline RankPlace PlaceOfRank(int32_t rank, int32_t dp, int32_t tp, int32_t cp,
                             int32_t gpus_per_node) {
  RankPlace p;
  p.rank = rank;
  p.tp = rank % tp;
  p.cp = (rank / tp) % cp;
  p.dp = (rank / (tp * cp)) % dp;
  p.pp = rank / (tp * cp * dp);
  p.node = rank / (gpus_per_node > 0 ? gpus_per_node : 1);
  return p;
}

}  // namespace strag::trace

#endif  // STRAG_SRC_TRACE_TOPOLOGY_H_
