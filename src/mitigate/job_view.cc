// SPDX-License-Identifier: Apache-2.0
#include "mitigate/job_view.h"

#include <algorithm>

#include "base/check.h"

namespace strag::mitigate {

bool IsComputeType(trace::OpType type) {
  return type == trace::OpType::kForwardCompute ||
         type == trace::OpType::kBackwardCompute ||
         type == trace::OpType::kCompute;
}

Cells::Cells(const whatif::PreparedTrace& t, int32_t gpus_per_node)
    : dp_(std::max(t.dp, 1)), pp_(std::max(t.pp, 1)), keys_(t.model.keys) {
  job_dp_ = std::max(t.topology.dp, 1);
  job_pp_ = std::max(t.topology.pp, 1);
  if (t.layout == whatif::Layout::kMegatron) {
    job_dp_ = dp_;
    job_pp_ = pp_;
  }
  // The topology's places are in the order of the workers (by rank).
  index_.assign(static_cast<size_t>(dp_) * static_cast<size_t>(pp_), 0);
  for (size_t k = 0; k < t.workers.size(); ++k) {
    const whatif::Worker& w = t.workers[k];
    Cell c;
    c.model_dp = w.dp;
    c.model_stage = w.pp;
    if (k < t.topology.places.size()) {
      c.place = t.topology.places[k];
    } else {
      c.place.rank = w.rank;
      c.place.dp = w.dp;
      c.place.pp = w.pp;
    }
    // Megatron traces place nodes by rank, unless the hosts are known
    // (--hosts): then a node is a host.
    if (t.layout == whatif::Layout::kMegatron && t.topology.hosts.empty()) {
      c.place.node = w.rank / std::max(gpus_per_node, 1);
    }
    STRAG_CHECK(c.place.rank == w.rank,
                "the topology's places follow the workers");
    index_[static_cast<size_t>(w.dp) * static_cast<size_t>(pp_) +
           static_cast<size_t>(w.pp)] = cells_.size();
    cells_.push_back(c);
  }
}

}  // namespace strag::mitigate
