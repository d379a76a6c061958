// SPDX-License-Identifier: Apache-2.0
// backup_workers: run b extra DP replicas; each DP collective goes on with
// the first dp replicas to reach it and the late ones' gradients are dropped
// (Chen et al.; reference: mitigations.md §4). Replayed with dp + b lanes
// per step and a quorum of dp on the DP collectives. A backup replica is a
// machine like the job's others: backup j of step k replays replica
// (k + j) mod dp of step (k + 1 + j) mod steps, a draw from the job's own
// replicas and steps.

#include <algorithm>
#include <cmath>
#include <set>

#include "base/str_format.h"
#include "mitigate/policies/policies.h"
#include "mitigate/worker_work.h"

namespace strag::mitigate {
namespace {

class BackupWorkers final : public Policy {
 public:
  std::string_view name() const override { return "backup_workers"; }
  Family family() const override { return Family::kBackup; }

  Applicability Check(const JobView& job, const Cells&) const override {
    std::string missing = ReplicaLanesMissing(job.trace);
    if (!missing.empty()) return {false, missing};
    return {true, ""};
  }

  std::vector<Proposal> Propose(const JobView& job, const Cells&,
                                std::string*) const override {
    const whatif::PreparedTrace& t = job.trace;
    const int32_t dp = t.dp;
    std::set<int32_t> counts = {1};
    counts.insert(static_cast<int32_t>(std::ceil(0.01 * dp)));
    counts.insert(static_cast<int32_t>(std::ceil(0.04 * dp)));
    std::vector<Proposal> out;
    for (int32_t b : counts) {
      if (b < 1 || b > dp) continue;
      out.push_back(Backups(job, b));
    }
    return out;
  }

 private:
  static Proposal Backups(const JobView& job, int32_t b) {
    const whatif::PreparedTrace& t = job.trace;
    const size_t n = t.num_nodes(), steps = t.steps.size();
    const auto dp = static_cast<size_t>(t.dp);
    const size_t per = dp + static_cast<size_t>(b);
    const size_t lanes = steps * per, inst = t.num_instances();
    Proposal p;
    Rewrite& rw = p.rewrite;
    rw.lanes_per_step = static_cast<int32_t>(per);
    rw.dp_quorum = static_cast<uint32_t>(dp);
    rw.cost.resize(n * lanes);
    for (size_t k = 0; k < steps; ++k) {
      for (size_t l = 0; l < per; ++l) {
        size_t src = k * dp + l;
        if (l >= dp) {
          const size_t j = l - dp;
          src = ((k + 1 + j) % steps) * dp + (k + j) % dp;
          if (steps == 1) src = (j + 1) % dp;
        }
        const size_t lane = k * per + l;
        for (size_t v = 0; v < n; ++v) {
          rw.cost[v * lanes + lane] = t.cost[v * inst + src];
        }
      }
    }
    const int64_t per_replica = job.econ.gpus / std::max<int64_t>(t.dp, 1);
    p.action = StrFormat(
        "%d backup DP replica%s: each step goes on with the first %d of %d "
        "replicas",
        b, b == 1 ? "" : "s", t.dp, t.dp + b);
    p.params = StrFormat("backups=%d", b);
    p.evidence = StrFormat(
        "the step waits for the slowest of %d replicas; with %d more it "
        "waits for the %d-th",
        t.dp, b, t.dp);
    p.effects = RestartEffects(
        job.econ, Semantics::kBatchNoise,
        "the late replicas' gradients are dropped each step (biased against "
        "long sequences); NCCL all-reduce has no quorum: needs a parameter "
        "server or a communicator re-formed per step");
    p.effects.extra_gpus = int64_t{b} * per_replica;
    return p;
  }
};

}  // namespace

std::unique_ptr<Policy> NewBackupWorkers() {
  return std::make_unique<BackupWorkers>();
}

}  // namespace strag::mitigate
