// SPDX-License-Identifier: Apache-2.0
// Policy: one mitigation of the playbook (reference: mitigations.md §7.1).
//
// A policy checks whether it applies to a job (and says why not in one
// line) and proposes concrete fixes. A proposal is data, never a callback:
// the replay inputs it rewrites (costs, launch delays, the lanes of a step,
// a quorum) and the fix's side effects. The planner replays it.

#ifndef STRAG_SRC_MITIGATE_POLICY_H_
#define STRAG_SRC_MITIGATE_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/huge_page_allocator.h"
#include "mitigate/job_view.h"

namespace strag::mitigate {

// The playbook's families, in its order of preference.
enum class Family : uint8_t {
  kBalance,      // A: balance the work
  kBackup,       // B: backup workers
  kDropAsync,    // C: drop work or go asynchronous
  kOperational,  // D: evict or replace, configuration
};
std::string_view FamilyName(Family family);  // "balance", ...

// What a fix does to the training itself, best first.
enum class Semantics : uint8_t {
  kIdentical,   // the same updates
  kDataOrder,   // the same global batch, samples on other ranks
  kBatchNoise,  // the batch varies (dropped or late work is lost)
  kStaleness,   // updates from stale parameters
};
std::string_view SemanticsName(Semantics semantics);

struct SideEffects {
  bool restart = false;    // the job must stop and restart
  double downtime_s = 0;   // one-off: restart + progress lost
  int64_t extra_gpus = 0;  // held for as long as the fix runs
  Semantics semantics = Semantics::kIdentical;
  double token_fraction = 1;  // of the tokens still trained on
  // Relative change of the activations each PP stage stores (repartition),
  // empty when unchanged.
  std::vector<double> memory_change_per_stage;
  std::string caveat;  // one sentence, "" when none
};

// The side effects of a fix that takes one restart to apply.
inline SideEffects RestartEffects(const Economics& econ, Semantics semantics,
                                  std::string caveat) {
  SideEffects e;
  e.restart = true;
  e.downtime_s = econ.restart_s;
  e.semantics = semantics;
  e.caveat = std::move(caveat);
  return e;
}

// The replay inputs of a proposal. Empty arrays keep the trace's.
struct Rewrite {
  // Own time per slot, [node * lanes + lane] (lanes = steps x
  // lanes_per_step); the traced costs when empty.
  BigVector<double> cost;
  // Launch delays per slot of the trace's own instances (host time; only
  // with lanes_per_step 0); the traced ones when empty.
  BigVector<float> launch_delay;
  int32_t lanes_per_step = 0;    // 0: the trace's instances per step
  uint32_t dp_quorum = 0;        // a DP collective needs this many lanes
  bool lane_per_domain = false;  // no lane waits for another (async)
  double added_step_s = 0;       // a cost added to every step, amortised
};

struct Proposal {
  std::string action;      // what to do, concretely
  std::string params;      // machine-readable: "node=0", "every=400"
  std::string evidence;    // why, with the numbers
  bool bound = false;      // an upper bound (a fact is missing)
  std::string bound_note;  // what would make it exact
  Rewrite rewrite;
  SideEffects effects;
};

struct Applicability {
  bool applies = false;
  std::string reason;  // why not, in one line ("" when it applies)
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;  // "stage_repartition"
  virtual Family family() const = 0;
  virtual Applicability Check(const JobView& job, const Cells& cells) const = 0;
  // Proposals for a job Check accepted, simplest first (a later one is
  // chosen only when it gains more than the noise band over the earlier);
  // may be empty (with `*why` set).
  virtual std::vector<Proposal> Propose(const JobView& job, const Cells& cells,
                                        std::string* why) const = 0;
};

// Every policy, in the playbook's order.
std::vector<std::unique_ptr<Policy>> AllPolicies();

}  // namespace strag::mitigate

#endif  // STRAG_SRC_MITIGATE_POLICY_H_
