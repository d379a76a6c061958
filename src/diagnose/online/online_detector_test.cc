// SPDX-License-Identifier: Apache-2.0
// End-to-end tests of the online detector on simulated jobs (seeded noise):
// each straggler cause injected alone must fire the right alert naming the
// right rank, healthy jobs must stay silent, and the same records must
// give the same events.

#include "diagnose/online/online_detector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace strag::diagnose::online {
namespace {

constexpr int64_t kMs = 1'000'000;

// A synchronous job: each rank computes (step_ms x its stage's factor x
// lognormal noise x slow(rank, step)), plus GC and data loading, then all
// wait at one barrier and transfer for comm_ms. Ranks are numbered pp, dp,
// tp (Megatron order: tp fastest).
struct Sim {
  int32_t dp = 4, pp = 1, tp = 1;
  double step_ms = 150, noise = 0.02, comm_ms = 10;
  std::vector<double> stage_factor;
  std::function<double(int32_t, int64_t)> slow, gc_ms, data_ms, s2;
  std::function<double(int32_t, int64_t)> host_ms;  // in no measured phase
  std::function<double(int64_t)> comm;
  std::mt19937_64 rng{42};
  int64_t t_ns = 1'700'000'000'000'000'000;

  int32_t size() const { return dp * pp * tp; }
  int32_t Rank(int32_t p, int32_t d, int32_t t) const {
    return (p * dp + d) * tp + t;
  }
  void Register(OnlineDetector* det) const {
    for (int32_t p = 0; p < pp; ++p) {
      for (int32_t d = 0; d < dp; ++d) {
        for (int32_t t = 0; t < tp; ++t) {
          det->SetPlace({Rank(p, d, t), d, p, t, -1});
        }
      }
    }
  }
  std::vector<RankStep> Step(int64_t k) {
    std::normal_distribution<double> n01(0, 1);
    std::vector<RankStep> out(static_cast<size_t>(size()));
    double slowest = 0;
    for (int32_t r = 0; r < size(); ++r) {
      RankStep& x = out[static_cast<size_t>(r)];
      const int32_t stage = r / (dp * tp);
      const double factor =
          stage_factor.empty() ? 1 : stage_factor[static_cast<size_t>(stage)];
      const double sq = s2 ? s2(r, k) : 1;
      double compute = step_ms * factor * std::exp(noise * n01(rng)) * sq;
      if (slow) compute *= slow(r, k);
      const double gc = gc_ms ? gc_ms(r, k) : 0,
                   data = data_ms ? data_ms(r, k) : 0;
      x.rank = r;
      x.fwd_ns = static_cast<int64_t>(compute / 3 * kMs);
      x.bwd_ns = static_cast<int64_t>(compute * 2 / 3 * kMs);
      x.gc_ns = static_cast<int64_t>(gc * kMs);
      x.data_ns = static_cast<int64_t>(data * kMs);
      if (s2) {
        x.sum_s2 = 1e9 * sq;
        x.tokens = 4096;
      }
      const double host = host_ms ? host_ms(r, k) : 0;
      x.step_ns = x.fwd_ns + x.bwd_ns + x.gc_ns + x.data_ns +
                  static_cast<int64_t>(host * kMs);  // busy, so far
      slowest = std::max(slowest, static_cast<double>(x.step_ns));
    }
    const double transfer = (comm ? comm(k) : comm_ms) * kMs;
    const auto step_ns = static_cast<int64_t>(slowest + transfer);
    t_ns += step_ns;
    const size_t g = pp > 1 && dp == 1 ? 1 : 0;  // pp sends, else dp
    for (RankStep& x : out) {
      x.coll_ns[g] = step_ns - x.step_ns;
      x.step_ns = step_ns;
      x.t_end_ns = t_ns + (x.rank % 3) * 1000;
    }
    return out;
  }
};

OnlineOptions Fast() {
  OnlineOptions o;
  o.window_steps = 100;
  o.window_s = 5;  // W = 100 steps at these step times
  o.continuity_s = 30;
  o.exit_s = 60;
  return o;
}

struct Trace {
  std::vector<AlertEvent> events;
  std::vector<StepSummary> steps;
};

Trace Drive(Sim& sim, OnlineDetector* det, int64_t steps) {
  Trace run;
  sim.Register(det);
  for (int64_t k = 0; k < steps; ++k) {
    const std::vector<RankStep> recs = sim.Step(k);
    StepResult r = det->CloseStep(k, recs);
    run.steps.push_back(r.summary);
    for (AlertEvent& e : r.events) run.events.push_back(std::move(e));
  }
  return run;
}

size_t Count(const Trace& run, AlertName name) {
  return static_cast<size_t>(
      std::count_if(run.events.begin(), run.events.end(),
                    [&](const AlertEvent& e) { return e.name == name; }));
}

const AlertEvent* First(const Trace& run, AlertName name, bool firing = true) {
  for (const AlertEvent& e : run.events) {
    if (e.name == name && e.firing == firing) return &e;
  }
  return nullptr;
}

std::string Dump(const Trace& run) {
  std::string s;
  for (const AlertEvent& e : run.events) {
    s += std::to_string(e.step) + " " + AlertNameText(e.name) +
         (e.firing ? " firing " : " resolved ") + e.scope + ": " + e.summary +
         "\n";
  }
  return s;
}

TEST(OnlineDetectorTest, SlowRankFiresAsFaultyWorker) {
  Sim sim;
  sim.slow = [](int32_t r, int64_t k) {
    return r == 2 && k >= 300 ? 1.2 : 1.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 800);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{2});
  EXPECT_EQ(e->cause, Cause::kFaultyWorker) << e->summary;
  EXPECT_EQ(e->scope, "rank 2, PP stage 0, DP replica 2, node 0");
  // 30 s of continuity (~160 steps of 190 ms) from the onset: the clock
  // starts where the rank became late, not where persistence reached 0.5.
  EXPECT_GE(e->step, 300 + 140) << Dump(run);
  EXPECT_LE(e->step, 300 + 160 + 20) << Dump(run);
  EXPECT_NEAR(e->excess_ratio, 30.0 / 190, 0.03);
  // The onset is also a regime change of the job's step time.
  EXPECT_EQ(Count(run, AlertName::kStragglerPersistent), 1u) << Dump(run);

  const OnlineView v = det.View();
  ASSERT_FALSE(v.top.empty());
  EXPECT_EQ(v.top[0].place.rank, 2);
  EXPECT_EQ(v.top[0].cause, Cause::kFaultyWorker);
  EXPECT_GT(v.top[0].persistence, 0.9);
  EXPECT_EQ(v.diagnosis.probable_cause, Cause::kFaultyWorker);
  EXPECT_EQ(v.diagnosis.largest_straggler.rank, 2);
  EXPECT_EQ(v.diagnosis.largest_straggler.dp, 2);
  EXPECT_EQ(v.diagnosis.scope, "rank 2, PP stage 0, DP replica 2, node 0");
  EXPECT_EQ(v.diagnosis.dominant_cause, "synchronization waiting (blocking)");
  EXPECT_TRUE(v.diagnosis.persistent);
  EXPECT_NEAR(v.diagnosis.excess_step_time_ms, 30, 5);
  EXPECT_NE(v.diagnosis.findings[0].evidence.find("rank 2 is late in"),
            std::string::npos)
      << v.diagnosis.findings[0].evidence;
  ASSERT_EQ(v.active.size(), 1u);
  EXPECT_NEAR(v.utilization, 160.0 / 190, 0.03);
  EXPECT_EQ(v.dp_size, 4);
  EXPECT_EQ(v.pp_size, 1);
  ASSERT_EQ(v.heat_mean.size(), 4u);
  EXPECT_NEAR(v.heat_last[2], 1.2, 0.06);
  EXPECT_NEAR(v.heat_mean[0], 1.0, 0.03);
  EXPECT_GT(v.wasted_s, 0);
}

TEST(OnlineDetectorTest, RecoveredRankResolvesAfterExit) {
  Sim sim;
  sim.slow = [](int32_t r, int64_t k) {
    return r == 1 && k >= 200 && k < 700 ? 1.2 : 1.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 1400);
  const AlertEvent* fired = First(run, AlertName::kStragglerPersistent);
  const AlertEvent* done = First(run, AlertName::kStragglerPersistent, false);
  ASSERT_NE(fired, nullptr) << Dump(run);
  ASSERT_NE(done, nullptr) << Dump(run);
  EXPECT_EQ(done->id, fired->id);
  // Exit holds once persistence < 0.2 (80 steps after the recovery), then
  // 60 s (~375 steps of 160 ms).
  EXPECT_GE(done->step, 700 + 375);
  EXPECT_LE(done->step, 700 + 100 + 375 + 20) << Dump(run);
  EXPECT_TRUE(det.View().active.empty());
}

TEST(OnlineDetectorTest, GcPausesAreHostPause) {
  Sim sim;
  sim.gc_ms = [](int32_t r, int64_t k) {
    return r == 1 && k >= 100 ? 40.0 : 0.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 700);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{1});
  EXPECT_EQ(e->cause, Cause::kHostPause) << e->summary;
  EXPECT_NE(e->summary.find("GC pauses cover"), std::string::npos);
  EXPECT_EQ(det.View().diagnosis.probable_cause, Cause::kHostPause);
}

// A rank that collects every third step is late in a third of the steps
// only, by so much that it still costs the job a quarter of its time.
TEST(OnlineDetectorTest, GcEveryFewStepsIsARecurringHostPause) {
  Sim sim;
  sim.gc_ms = [](int32_t r, int64_t k) {
    return r == 1 && k >= 100 && k % 3 == 0 ? 150.0 : 0.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 700);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{1});
  EXPECT_EQ(e->cause, Cause::kHostPause) << e->summary;
  EXPECT_EQ(det.View().diagnosis.probable_cause, Cause::kHostPause);
}

// Rare pauses (one step in 20) are transient: no alert.
TEST(OnlineDetectorTest, RareGcPausesRaiseNoAlert) {
  Sim sim;
  sim.gc_ms = [](int32_t r, int64_t k) {
    return r == 1 && k % 20 == 0 ? 150.0 : 0.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 700);
  EXPECT_EQ(First(run, AlertName::kStragglerPersistent), nullptr) << Dump(run);
}

TEST(OnlineDetectorTest, DataStallsAreDataLoading) {
  Sim sim;
  sim.data_ms = [](int32_t r, int64_t k) {
    return r == 3 && k >= 100 ? 30.0 : 1.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 700);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{3});
  EXPECT_EQ(e->cause, Cause::kDataLoading) << e->summary;
  const OnlineView v = det.View();
  EXPECT_EQ(v.diagnosis.probable_cause, Cause::kDataLoading);
  EXPECT_EQ(v.diagnosis.dominant_cause, "host-side launch delays");
}

TEST(OnlineDetectorTest, HeavyLastStageIsStageImbalance) {
  for (int32_t dp : {1, 2}) {
    Sim sim;
    sim.pp = 4;
    sim.dp = dp;
    sim.stage_factor = {1.0, 1.0, 1.0, 1.3};
    OnlineOptions o = Fast();
    o.microbatches = 8;
    OnlineDetector det(o);
    const Trace run = Drive(sim, &det, 600);
    ASSERT_EQ(run.events.size(), 1u) << "dp " << dp << "\n" << Dump(run);
    const AlertEvent& e = run.events.front();
    EXPECT_EQ(e.cause, Cause::kStageImbalance);
    EXPECT_EQ(e.scope, "PP stage 3");
    const OnlineView v = det.View();
    EXPECT_EQ(v.diagnosis.probable_cause, Cause::kStageImbalance);
    EXPECT_EQ(v.diagnosis.largest_straggler.pp, 3);
    ASSERT_EQ(v.stage_busy_s.size(), 4u);
    EXPECT_NEAR(v.stage_busy_s[3] / v.stage_busy_s[0], 1.3, 0.05);
  }
}

TEST(OnlineDetectorTest, HealthyFourRanksStaySilent) {
  Sim sim;
  sim.noise = 0.05;
  OnlineDetector det;  // default options
  const Trace run = Drive(sim, &det, 10'000);
  EXPECT_TRUE(run.events.empty()) << Dump(run);
  const OnlineView v = det.View();
  EXPECT_EQ(v.diagnosis.probable_cause, Cause::kNone);
  ASSERT_FALSE(v.diagnosis.findings.empty());
  EXPECT_NE(v.diagnosis.findings[0].evidence.find("healthy"),
            std::string::npos);
  EXPECT_EQ(v.diagnosis.largest_straggler.rank, -1);
}

TEST(OnlineDetectorTest, HealthyFourRanksStaySilentFast) {
  // The same with the short test windows and continuity.
  Sim sim;
  sim.noise = 0.05;
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 10'000);
  EXPECT_TRUE(run.events.empty()) << Dump(run);
}

TEST(OnlineDetectorTest, HealthyThousandRanksStaySilent) {
  Sim sim;
  sim.dp = 1024;
  sim.noise = 0.05;
  OnlineDetector det;
  const Trace run = Drive(sim, &det, 10'000);
  EXPECT_TRUE(run.events.empty()) << Dump(run);
  EXPECT_EQ(det.View().diagnosis.probable_cause, Cause::kNone);
}

TEST(OnlineDetectorTest, SilentRankFiresAndResolves) {
  Sim sim;
  OnlineOptions o = Fast();
  OnlineDetector det(o);
  sim.Register(&det);
  std::vector<AlertEvent> events;
  for (int64_t k = 0; k < 400; ++k) {
    std::vector<RankStep> recs = sim.Step(k);
    if (k >= 200 && k < 300) recs.erase(recs.begin() + 3);
    for (AlertEvent& e : det.CloseStep(k, recs).events) events.push_back(e);
    if (k == 250) {
      EXPECT_EQ(det.View().silent_ranks, std::vector<int32_t>{3});
    }
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].name, AlertName::kRankSilent);
  EXPECT_TRUE(events[0].firing);
  EXPECT_EQ(events[0].step, 200 + o.silent_steps - 1);
  EXPECT_EQ(events[0].ranks, std::vector<int32_t>{3});
  EXPECT_EQ(events[0].scope, "rank 3, PP stage 0, DP replica 3, node 0");
  EXPECT_FALSE(events[1].firing);
  EXPECT_EQ(events[1].step, 300);
  EXPECT_TRUE(det.View().silent_ranks.empty());
}

// Host time outside the measured phases (work between them, or a DDP
// backward whose host timing holds the all-reduce) is still the rank's own
// work: with GC and data loading ruled out, a faulty worker.
TEST(OnlineDetectorTest, LatenessOutsideThePhasesIsTheRanksOwnWork) {
  Sim sim;
  sim.host_ms = [](int32_t r, int64_t k) {
    return r == 2 && k >= 100 ? 30.0 : 0.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 600);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{2});
  EXPECT_EQ(e->cause, Cause::kFaultyWorker);
  EXPECT_NE(e->summary.find("its own work"), std::string::npos) << e->summary;
}

// Half GC, half data loading: neither covers 80% of the lateness.
TEST(OnlineDetectorTest, MixedLatenessIsAStragglerOfUnclearCause) {
  Sim sim;
  sim.gc_ms = [](int32_t r, int64_t k) {
    return r == 2 && k >= 100 ? 16.0 : 0.0;
  };
  sim.data_ms = [](int32_t r, int64_t k) {
    return r == 2 && k >= 100 ? 14.0 : 0.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 600);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{2});
  EXPECT_EQ(e->cause, Cause::kNone);
  EXPECT_NE(e->summary.find("straggler (cause unclear)"), std::string::npos)
      << e->summary;
  const OnlineView v = det.View();
  EXPECT_EQ(v.diagnosis.probable_cause, Cause::kNone);
  EXPECT_EQ(v.diagnosis.largest_straggler.rank, 2);
}

TEST(OnlineDetectorTest, ASilentNodeIsOneAlert) {
  Sim sim;
  sim.dp = 16;
  OnlineDetector det(Fast());
  sim.Register(&det);
  std::vector<AlertEvent> events;
  for (int64_t k = 0; k < 100; ++k) {
    std::vector<RankStep> recs = sim.Step(k);
    if (k >= 50) recs.resize(8);  // ranks 8-15, node 1, stop
    for (AlertEvent& e : det.CloseStep(k, recs).events) events.push_back(e);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].ranks.size(), 8u);
  EXPECT_EQ(events[0].scope, "node 1 (ranks 8, 9, 10, 11, 12, 13, 14, 15)");
  EXPECT_EQ(det.View().silent_ranks.size(), 8u);
}

TEST(OnlineDetectorTest, TensorParallelCellNamesItsSlowestRank) {
  Sim sim;
  sim.dp = 2;
  sim.tp = 2;
  sim.slow = [](int32_t r, int64_t k) {
    return r == 3 && k >= 100 ? 1.2 : 1.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 600);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{3});
  EXPECT_EQ(e->scope,
            "rank 3 in TP group 2-3, PP stage 0, DP replica 1, node 0");
  const OnlineView v = det.View();
  EXPECT_EQ(v.diagnosis.largest_straggler.rank, 3);
  EXPECT_EQ(v.diagnosis.largest_straggler.tp, 1);
  EXPECT_EQ(v.heat_mean.size(), 2u);  // pp x dp cells
}

TEST(OnlineDetectorTest, PipelineRankThatSlowsIsAWorker) {
  // One rank per stage: no peers; its own baseline finds it.
  Sim sim;
  sim.pp = 4;
  sim.dp = 1;
  sim.slow = [](int32_t r, int64_t k) {
    return r == 1 && k >= 200 ? 1.25 : 1.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 700);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{1});
  EXPECT_EQ(e->cause, Cause::kFaultyWorker) << e->summary;
  // The onset is also a regime change of the job's step time.
  EXPECT_EQ(Count(run, AlertName::kStragglerPersistent), 1u) << Dump(run);
}

TEST(OnlineDetectorTest, TwoReplicasFindTheSlowOne) {
  Sim sim;
  sim.dp = 2;
  sim.slow = [](int32_t r, int64_t k) {
    return r == 0 && k >= 200 ? 1.2 : 1.0;
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 700);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->ranks, std::vector<int32_t>{0});
  // The onset is also a regime change of the job's step time.
  EXPECT_EQ(Count(run, AlertName::kStragglerPersistent), 1u) << Dump(run);
}

TEST(OnlineDetectorTest, SequenceLengthImbalanceIsJobWide) {
  Sim sim;
  sim.dp = 8;
  std::mt19937_64 rng(7);
  std::vector<double> draws(8 * 2000);
  std::lognormal_distribution<double> lengths(0, 0.3);
  for (double& x : draws) x = lengths(rng);
  sim.s2 = [draws](int32_t r, int64_t k) {
    return draws[static_cast<size_t>(k * 8 + r)];
  };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 800);
  ASSERT_FALSE(run.events.empty());
  EXPECT_EQ(run.events.front().cause, Cause::kSequenceLengthImbalance)
      << Dump(run);
  EXPECT_EQ(run.events.front().scope, "job");
  EXPECT_EQ(First(run, AlertName::kStragglerPersistent)->ranks.size(), 0u);
}

TEST(OnlineDetectorTest, SlowTransfersAreCommunication) {
  Sim sim;
  sim.comm = [](int64_t k) { return k >= 300 ? 25.0 : 10.0; };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 800);
  const AlertEvent* e = First(run, AlertName::kStragglerPersistent);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_EQ(e->cause, Cause::kCommunication);
  EXPECT_EQ(e->scope, "job (dp collectives)");
}

TEST(OnlineDetectorTest, JobWideSlowdownIsARegimeChange) {
  Sim sim;
  sim.slow = [](int32_t, int64_t k) { return k >= 400 ? 1.3 : 1.0; };
  OnlineDetector det(Fast());
  const Trace run = Drive(sim, &det, 800);
  const AlertEvent* e = First(run, AlertName::kRegimeChange);
  ASSERT_NE(e, nullptr) << Dump(run);
  EXPECT_GE(e->step, 400);
  EXPECT_LE(e->step, 420);
  EXPECT_NEAR(e->excess_ratio, 0.28, 0.05);
  EXPECT_EQ(First(run, AlertName::kStragglerPersistent), nullptr) << Dump(run);
  EXPECT_TRUE(run.steps[static_cast<size_t>(e->step)].regime_change);
}

TEST(OnlineDetectorTest, SameRecordsSameEvents) {
  auto once = [] {
    Sim sim;
    sim.slow = [](int32_t r, int64_t k) {
      return r == 2 && k >= 200 ? 1.2 : 1.0;
    };
    sim.gc_ms = [](int32_t r, int64_t k) {
      return r == 0 && k % 3 == 0 ? 30.0 : 0;
    };
    OnlineDetector det(Fast());
    Trace run = Drive(sim, &det, 700);
    return std::make_pair(Dump(run), det.View());
  };
  const auto a = once(), b = once();
  EXPECT_FALSE(a.first.empty());
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second.heat_mean, b.second.heat_mean);
  EXPECT_EQ(a.second.diagnosis.findings.size(),
            b.second.diagnosis.findings.size());
  EXPECT_EQ(a.second.wasted_s, b.second.wasted_s);
}

TEST(OnlineDetectorTest, WarmupAndFlagsAreNotJudged) {
  Sim sim;
  OnlineDetector det(Fast());
  sim.Register(&det);
  for (int64_t k = 0; k < 5; ++k) {
    std::vector<RankStep> recs = sim.Step(k);
    if (k == 4) {
      for (RankStep& r : recs) r.flags = 1;
    }
    const StepResult r = det.CloseStep(k, recs);
    EXPECT_EQ(r.summary.judged, k == 3) << k;
    EXPECT_EQ(r.summary.reporting, 4);
  }
  // Out of order: ignored.
  EXPECT_FALSE(det.CloseStep(2, sim.Step(5)).summary.judged);
  EXPECT_EQ(det.View().steps_closed, 5);
  // Bad ranks and duplicates are dropped; an empty step is not judged.
  std::vector<RankStep> recs = sim.Step(6);
  recs.push_back(recs.front());
  recs.push_back(recs.front());
  recs.back().rank = -5;
  const StepResult r = det.CloseStep(6, recs);
  EXPECT_EQ(r.summary.reporting, 4);
  EXPECT_TRUE(r.summary.judged);
  EXPECT_EQ(det.RankCount(), 4);
  EXPECT_FALSE(det.CloseStep(7, {}).summary.judged);
}

}  // namespace
}  // namespace strag::diagnose::online

namespace strag::diagnose::online {
namespace {

// The collector shows a job before its first step closes, and ranks
// register in any order: View must hold then.
TEST(OnlineDetectorView, BeforeAnyStepAndWithLateRanks) {
  OnlineDetector d;
  for (int32_t s = 0; s < 4; ++s) {
    for (int32_t dp = 0; dp < 4; ++dp) {
      for (int32_t t = 0; t < 4; ++t) {
        d.SetPlace({(s * 4 + dp) * 4 + t, dp, s, t, (s * 4 + dp) / 2});
      }
    }
  }
  OnlineView v = d.View();
  EXPECT_EQ(v.steps_closed, 0);
  EXPECT_EQ(v.dp_size, 4);
  EXPECT_EQ(v.pp_size, 4);
  std::vector<RankStep> recs;
  for (int32_t r = 0; r < 32; ++r) {
    RankStep x;
    x.rank = r;
    x.t_end_ns = 1'000'000'000;
    x.step_ns = 100'000'000;
    recs.push_back(x);
  }
  d.CloseStep(1, recs);
  for (int32_t r = 64; r < 80; ++r) d.SetPlace({r, r - 60, 0, 0, 9});
  v = d.View();
  EXPECT_EQ(v.steps_closed, 1);
}

}  // namespace
}  // namespace strag::diagnose::online
