// SPDX-License-Identifier: Apache-2.0
// The detectors against simulated jobs whose cause is known: 6 causes x 5
// seeds. The probable cause must be right in at least 90% of the scenarios
// and the worst worker right in every slow-worker scenario.

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "diagnose/diagnosis.h"
#include "sim/simulator.h"
#include "whatif/analysis.h"
#include "whatif/prepared_trace.h"

namespace strag {
namespace {

using diagnose::Cause;
using sim::StragglerSpec;

sim::JobSpec Base(uint64_t seed) {
  sim::JobSpec spec;
  spec.name = "scenario";
  spec.job = {.dp = 4, .pp = 4, .tp = 2, .cp = 1, .vpp = 1, .microbatches = 8,
              .steps = 8, .gpus_per_node = 8, .seed = seed};
  spec.compute = {.forward_ms = 10, .backward_ms = 20, .optimizer_ms = 1,
                  .noise = {.kind = sim::NoiseSpec::Kind::kLognormal, .sigma = 0.01}};
  spec.comm.p2p_ms = 0.2;
  spec.comm.dp_allgather_ms = 2;
  spec.comm.dp_reducescatter_ms = 3;
  spec.comm.noise = {.kind = sim::NoiseSpec::Kind::kLognormal, .sigma = 0.02};
  return spec;
}

struct Scenario {
  Cause expected;
  sim::JobSpec spec;
  int32_t worker_rank = -1;  // slow-worker scenarios: the traced worker
};

Scenario Make(Cause cause, uint64_t seed) {
  Scenario s{cause, Base(seed)};
  sim::JobSpec& spec = s.spec;
  const int64_t world = 4 * 4 * 2;
  switch (cause) {
    case Cause::kFaultyWorker: {
      StragglerSpec st;
      st.kind = StragglerSpec::Kind::kSlowWorker;
      st.rank = static_cast<int64_t>((seed * 7 + 3) % world);
      st.factor = 1.3 + 0.1 * static_cast<double>(seed % 3);
      spec.stragglers.push_back(st);
      s.worker_rank = static_cast<int32_t>(st.rank / 2 * 2);
      break;
    }
    case Cause::kStageImbalance:
      spec.model.layers = 8;
      spec.model.loss_layer_cost = 0.8 + 0.2 * static_cast<double>(seed % 3);
      break;
    case Cause::kSequenceLengthImbalance:
      spec.sequences.kind = sim::SequenceSection::Kind::kLognormal;
      spec.sequences.median = 2048;
      spec.sequences.sigma = 0.6;
      spec.sequences.max = 32768;
      spec.sequences.quadratic = 0.0005;
      break;
    case Cause::kHostPause: {
      StragglerSpec st;
      st.kind = StragglerSpec::Kind::kGcPause;
      st.all_ranks = true;
      st.rate_per_step = 0.03;
      st.pause_ms = 150;
      spec.stragglers.push_back(st);
      break;
    }
    case Cause::kCommunication: {
      spec.comm.p2p_ms = 2;
      spec.comm.dp_allgather_ms = 10;
      spec.comm.dp_reducescatter_ms = 15;
      StragglerSpec st;
      st.kind = StragglerSpec::Kind::kSlowLink;
      st.node = static_cast<int32_t>(seed % 4);
      st.factor = 6;
      spec.stragglers.push_back(st);
      break;
    }
    case Cause::kNone:
    case Cause::kDataLoading:  // the simulator has no input pipeline: see
      break;                   // tests/realrun (real PyTorch jobs)
  }
  return s;
}

TEST(SimulatedCausesTest, ProbableCauseAndWorstWorker) {
  int right = 0, total = 0;
  for (Cause cause : {Cause::kFaultyWorker, Cause::kStageImbalance,
                      Cause::kSequenceLengthImbalance, Cause::kHostPause,
                      Cause::kCommunication, Cause::kNone}) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      const Scenario s = Make(cause, seed);
      auto job = sim::Simulate(s.spec, {.truth = false});
      ASSERT_TRUE(job.ok()) << job.status().message();
      const trace::OpsTable table = sim::ToOpsTable(*job, 0, s.spec.job.steps - 1);
      auto prepared = whatif::PrepareTrace(table, sim::MetaOf(*job));
      ASSERT_TRUE(prepared.ok()) << prepared.status().message();
      auto result = whatif::Analyze(*prepared, {});
      ASSERT_TRUE(result.ok()) << result.status().message();
      const diagnose::Diagnosis d = diagnose::Diagnose(*prepared, *result, {.tp = 2});
      ++total;
      const bool ok = d.probable_cause == cause;
      right += ok;
      if (!ok) {
        std::printf("scenario %s seed %llu: got %s (%s)\n",
                    std::string(diagnose::CauseName(cause)).c_str(),
                    static_cast<unsigned long long>(seed),
                    std::string(diagnose::CauseName(d.probable_cause)).c_str(),
                    d.findings.empty() ? "" : d.findings[0].evidence.c_str());
      }
      if (cause == Cause::kFaultyWorker) {
        EXPECT_EQ(d.largest_straggler.rank, s.worker_rank) << "seed " << seed;
      }
    }
  }
  std::printf("probable cause right in %d of %d scenarios\n", right, total);
  EXPECT_GE(right * 10, total * 9);
}

}  // namespace
}  // namespace strag
