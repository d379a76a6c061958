// SPDX-License-Identifier: Apache-2.0
// Structural tests of the Kineto export: every file parses, every kernel has
// its launch, correlations are unique, CPU events nest, streams are ordered,
// Seq agrees across the members of each process group, times are exact
// nanoseconds shifted by each rank's clock offset, and the output is
// deterministic.

#include "ingest/kineto/kineto_writer.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/clock_offsets.h"
#include "sim/job_spec.h"
#include "sim/simulator.h"

namespace strag::ingest {
namespace {

using trace::OpType;

struct Sim {
  sim::SimulatedJob job;
  trace::OpsTable table;
  trace::JobMeta meta;
};

// Export options with clock offsets drawn as `strag simulate` draws them.
KinetoExportOptions WithOffsets(const Sim& s, double max_ms, uint64_t seed,
                                KinetoExportOptions o = {}) {
  o.clock_offset_ns = sim::DrawClockOffsets(
      seed, static_cast<size_t>(s.meta.dp) * static_cast<size_t>(s.meta.pp),
      max_ms);
  o.max_clock_offset_ms = max_ms;
  o.seed = seed;
  return o;
}

Sim Simulated(const std::string& yaml) {
  Sim s;
  auto spec = sim::ParseJobSpec(yaml, "test.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  auto job = sim::Simulate(*spec, {.truth = false});
  EXPECT_TRUE(job.ok()) << job.status().message();
  s.job = std::move(*job);
  s.table = sim::ToOpsTable(s.job, 0, s.job.spec.job.steps - 1);
  s.meta = sim::MetaOf(s.job);
  return s;
}

// No comm noise: the members of a collective end at the same instant.
constexpr char kOneFOneB[] = R"(
job: {dp: 2, pp: 3, microbatches: 4, steps: 3, seed: 7}
compute: {forward_ms: 2, backward_ms: 4, optimizer_ms: 1,
          noise: {dist: lognormal, sigma: 0.1}}
comm: {p2p_ms: 0.2, dp_allgather_ms: 1, dp_reducescatter_ms: 1.5,
       layernorm_ms: 0.1, embedding_ms: 0.3, clip_ms: 0.05}
stragglers:
  - {kind: slow_worker, rank: 4, factor: 1.5}
  - {kind: gc_pause, ranks: all, rate_per_step: 0.3, pause_ms: 2}
)";

constexpr char kInterleaved[] = R"(
job: {dp: 2, pp: 3, vpp: 2, microbatches: 6, steps: 2, seed: 3}
compute: {forward_ms: 2, backward_ms: 4, noise: {dist: lognormal, sigma: 0.1}}
comm: {p2p_ms: 0.2, dp_allgather_ms: 1, dp_reducescatter_ms: 1.5,
       layernorm_ms: 0.1, embedding_ms: 0.3, clip_ms: 0.05}
)";

struct Event {
  int64_t rank = -1;  // of the file
  std::string ph, cat, name;
  int64_t pid = -1, tid = -1, ts = 0, dur = 0;  // ns
  int64_t external = -1, correlation = -1, stream = -1, seq = -1;
  int64_t dst = -1, src = -1, group_size = -1;
  std::string collective, pg_name, pg_desc, pg_ranks;
  int64_t end() const { return ts + dur; }
};

struct RankFile {
  int64_t rank = -1, world = -1;
  std::string nccl_version;
  std::map<std::string, std::string> pg_ranks;  // pg_name -> "[0, 1]"
  std::vector<Event> events;
};

using Field = simdjson::simdjson_result<simdjson::dom::element>;

std::string Str(Field f) {
  std::string_view v;
  return f.get_string().get(v) == simdjson::SUCCESS ? std::string(v) : "";
}
int64_t Int(Field f) {
  int64_t v = -1;
  return f.get_int64().get(v) == simdjson::SUCCESS ? v : -1;
}
// Microseconds to ns: the timestamps are ~1e12 us, where a double is exact
// to 1e-4 us, so rounding recovers the written nanosecond.
int64_t Ns(Field f) {
  double v = 0;
  EXPECT_EQ(f.get_double().get(v), simdjson::SUCCESS);
  return std::llround(v * 1000.0);
}

RankFile Parse(const std::string& text, simdjson::dom::parser& parser) {
  RankFile file;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS);
  simdjson::dom::element info = doc["distributedInfo"];
  file.rank = Int(info["rank"]);
  file.world = Int(info["world_size"]);
  file.nccl_version = Str(info["nccl_version"]);
  simdjson::dom::array groups;
  EXPECT_EQ(info["pg_config"].get_array().get(groups), simdjson::SUCCESS);
  for (simdjson::dom::element g : groups) {
    std::string ranks = "[";
    simdjson::dom::array list;
    EXPECT_EQ(g["ranks"].get_array().get(list), simdjson::SUCCESS);
    for (simdjson::dom::element r : list) {
      int64_t v = -1;
      EXPECT_EQ(r.get_int64().get(v), simdjson::SUCCESS);
      ranks += (ranks.size() > 1 ? ", " : "") + std::to_string(v);
    }
    file.pg_ranks[Str(g["pg_name"])] = ranks + "]";
    EXPECT_EQ(Int(g["pg_size"]), static_cast<int64_t>(list.size()));
  }
  simdjson::dom::array events;
  EXPECT_EQ(doc["traceEvents"].get_array().get(events), simdjson::SUCCESS);
  for (simdjson::dom::element e : events) {
    Event ev;
    ev.rank = file.rank;
    ev.ph = Str(e["ph"]);
    ev.cat = Str(e["cat"]);
    ev.name = Str(e["name"]);
    ev.pid = Int(e["pid"]);
    ev.tid = Int(e["tid"]);
    if (ev.ph == "X") {
      ev.ts = Ns(e["ts"]);
      ev.dur = Ns(e["dur"]);
    }
    simdjson::dom::element args = e["args"];
    ev.external = Int(args["External id"]);
    ev.correlation = Int(args["correlation"]);
    ev.stream = Int(args["stream"]);
    ev.seq = Int(args["Seq"]);
    ev.dst = Int(args["Dst Rank"]);
    ev.src = Int(args["Src Rank"]);
    ev.group_size = Int(args["Group size"]);
    ev.collective = Str(args["Collective name"]);
    ev.pg_name = Str(args["Process Group Name"]);
    ev.pg_desc = Str(args["Process Group Description"]);
    ev.pg_ranks = Str(args["Process Group Ranks"]);
    file.events.push_back(std::move(ev));
  }
  return file;
}

// Every "ts" and "dur" value is written as microseconds with exactly three
// decimals: the nanoseconds, exactly.
void ExpectThreeDecimals(const std::string& text) {
  int checked = 0;
  for (std::string_view key : {"\"ts\": ", "\"dur\": "}) {
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + 1)) {
      size_t p = at + key.size();
      while (p < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[p])))
        ++p;
      ASSERT_LT(p + 4, text.size());
      ASSERT_EQ(text[p], '.') << text.substr(at, 40);
      for (size_t k = 1; k <= 3; ++k) {
        ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(text[p + k])));
      }
      ASSERT_TRUE(text[p + 4] == ',' || text[p + 4] == '}')
          << text.substr(at, 40);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

struct Rendered {
  std::vector<std::string> texts;
  std::vector<RankFile> files;
  std::vector<KinetoRankStats> stats;
};

Rendered RenderAll(const KinetoExport& ex, simdjson::dom::parser& parser) {
  Rendered out;
  for (const KinetoWorker& w : ex.workers()) {
    std::string text;
    out.stats.push_back(ex.Render(w.rank, &text));
    out.files.push_back(Parse(text, parser));
    out.texts.push_back(std::move(text));
  }
  return out;
}

// Kernels and launches pair up by correlation; launches precede kernels.
void ExpectLaunches(const RankFile& f) {
  std::map<int64_t, const Event*> kernels, launches;
  for (const Event& e : f.events) {
    if (e.cat == "kernel") {
      EXPECT_TRUE(kernels.emplace(e.correlation, &e).second)
          << "duplicate correlation " << e.correlation;
      EXPECT_EQ(e.stream, e.tid);
    }
    if (e.cat == "cuda_runtime") {
      EXPECT_EQ(e.name, "cudaLaunchKernel");
      EXPECT_TRUE(launches.emplace(e.correlation, &e).second);
    }
  }
  EXPECT_EQ(kernels.size(), launches.size());
  for (const auto& [corr, k] : kernels) {
    auto it = launches.find(corr);
    ASSERT_NE(it, launches.end()) << "kernel without launch " << corr;
    EXPECT_LE(it->second->ts, k->ts);
    EXPECT_EQ(it->second->external, k->external);
  }
}

// Top-level CPU events never overlap and come in time order; each comm
// launch sits inside its record_param_comms (a compute launch inside its
// shaped cpu_op); every one lies in one step.
void ExpectCpuThread(const RankFile& f) {
  std::vector<const Event*> top, steps;
  const Event* rpc = nullptr;
  for (const Event& e : f.events) {
    if (e.ph != "X" || e.cat == "kernel") continue;
    if (e.cat == "user_annotation") {
      steps.push_back(&e);
    } else if (e.cat == "cuda_runtime" && rpc && rpc->external == e.external) {
      EXPECT_LE(rpc->ts, e.ts);
      EXPECT_LE(e.end(), rpc->end());
      // A compute op's shaped cpu_op wraps its first kernel's launch.
      if (rpc->name != "record_param_comms") rpc = nullptr;
    } else {
      top.push_back(&e);
      rpc = e.cat == "cpu_op" ? &e : nullptr;  // wraps its launch
    }
  }
  for (size_t i = 1; i < top.size(); ++i) {
    EXPECT_LE(top[i - 1]->end(), top[i]->ts) << top[i]->name;
  }
  for (size_t i = 1; i < steps.size(); ++i) {
    EXPECT_LE(steps[i - 1]->end(), steps[i]->ts);
  }
  for (const Event* e : top) {
    const auto n = std::count_if(steps.begin(), steps.end(), [&](auto* s) {
      return s->ts <= e->ts && e->end() <= s->end();
    });
    EXPECT_EQ(n, 1) << e->name << " at " << e->ts;
  }
}

// Kernels of one stream start in order and do not overlap.
void ExpectStreams(const RankFile& f) {
  std::map<int64_t, int64_t> last_end;
  for (const Event& e : f.events) {
    if (e.cat != "kernel") continue;
    auto [it, fresh] = last_end.emplace(e.tid, e.end());
    if (!fresh) {
      EXPECT_LE(it->second, e.ts) << "stream " << e.tid;
      it->second = e.end();
    }
  }
  EXPECT_GE(last_end.size(), 2u);
}

// Per process group, the members' NCCL kernels in file order; checks that
// Seq counts 0, 1, ... on every member and that the members agree.
// Fills `instances`, when given: (group, seq) -> the members' events.
using Instances =
    std::map<std::pair<std::string, int64_t>, std::vector<const Event*>>;
void ExpectSeqConsistent(const std::vector<RankFile>& files,
                         Instances* instances = nullptr) {
  std::map<std::string, std::map<int64_t, std::vector<const Event*>>> groups;
  for (const RankFile& f : files) {
    for (const Event& e : f.events) {
      if (e.cat != "kernel" || e.pg_name.empty()) continue;
      EXPECT_EQ(e.name.rfind("nccl", 0), 0u) << e.name;
      ASSERT_TRUE(f.pg_ranks.count(e.pg_name)) << e.pg_name;
      EXPECT_EQ(f.pg_ranks.at(e.pg_name), e.pg_ranks);
      groups[e.pg_name][f.rank].push_back(&e);
    }
  }
  Instances out;
  for (const auto& [name, members] : groups) {
    const auto& first = members.begin()->second;
    const bool p2p = first.front()->collective == "send" ||
                     first.front()->collective == "recv";
    EXPECT_EQ(static_cast<int64_t>(members.size()), first.front()->group_size)
        << "group " << name;
    for (const auto& [rank, ops] : members) {
      ASSERT_EQ(ops.size(), first.size()) << "group " << name;
      for (size_t k = 0; k < ops.size(); ++k) {
        EXPECT_EQ(ops[k]->seq, static_cast<int64_t>(k));
        if (!p2p) {
          EXPECT_EQ(ops[k]->collective, first[k]->collective);
        }
        out[{name, ops[k]->seq}].push_back(ops[k]);
      }
    }
    if (!p2p) continue;
    ASSERT_EQ(members.size(), 2u) << name;
    const auto& [r0, a] = *members.begin();
    const auto& [r1, b] = *members.rbegin();
    for (size_t k = 0; k < a.size(); ++k) {
      const Event* send = a[k]->collective == "send" ? a[k] : b[k];
      const Event* recv = a[k]->collective == "send" ? b[k] : a[k];
      const int64_t sender = send == a[k] ? r0 : r1;
      EXPECT_EQ(recv->collective, "recv");
      EXPECT_EQ(send->dst, sender == r0 ? r1 : r0);
      EXPECT_EQ(recv->src, sender);
    }
  }
  if (instances) *instances = std::move(out);
}

TEST(KinetoWriterTest, OneFOneBFilesAreConsistent) {
  Sim s = Simulated(kOneFOneB);
  const KinetoExportOptions options =
      WithOffsets(s, 50, 11, {.kernels_per_compute = 3});
  auto ex = KinetoExport::Build(s.table, s.meta, options);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ASSERT_EQ(ex->workers().size(), 6u);
  simdjson::dom::parser parser;
  const Rendered r = RenderAll(*ex, parser);
  for (size_t k = 0; k < r.files.size(); ++k) {
    const RankFile& f = r.files[k];
    SCOPED_TRACE("rank " + std::to_string(k));
    EXPECT_EQ(f.rank, static_cast<int64_t>(k));
    EXPECT_EQ(f.world, 6);
    EXPECT_EQ(f.pg_ranks.at("0"), "[0, 1, 2, 3, 4, 5]");
    EXPECT_EQ(f.nccl_version, "2.21.5");
    ExpectThreeDecimals(r.texts[k]);
    ExpectLaunches(f);
    ExpectCpuThread(f);
    ExpectStreams(f);
    // One kernel per comm op, three per compute op, a CPU event per gc.
    const KinetoWorker& w = ex->workers()[k];
    int64_t compute = 0, comm = 0, gc = 0;
    for (size_t i = 0; i < s.table.size(); ++i) {
      if (s.table.dp[i] != w.dp || s.table.pp[i] != w.stage) continue;
      const OpType t = s.table.op_type[i];
      if (t == OpType::kGc) {
        ++gc;
      } else if (trace::IsCompute(t) || t == OpType::kOptimizer) {
        ++compute;
      } else {
        ++comm;
      }
    }
    EXPECT_EQ(r.stats[k].kernels, 3 * compute + comm);
    EXPECT_EQ(r.stats[k].nccl_kernels, comm);
    EXPECT_EQ(r.stats[k].cpu_pauses, gc);
    EXPECT_EQ(r.stats[k].skipped_noop_p2p, 0);
    EXPECT_EQ(r.stats[k].steps, 3);
  }
  ExpectSeqConsistent(r.files);
}

// The de-offset times are the table's, to the nanosecond; without comm
// noise the members of a collective end together, so their raw ends differ
// by exactly their clock offsets.
TEST(KinetoWriterTest, ClockOffsetsShiftTimesExactly) {
  Sim s = Simulated(kOneFOneB);
  auto ex = KinetoExport::Build(s.table, s.meta, WithOffsets(s, 50, 5));
  ASSERT_TRUE(ex.ok());
  simdjson::dom::parser parser;
  const Rendered r = RenderAll(*ex, parser);
  std::vector<int64_t> offset;
  for (const KinetoWorker& w : ex->workers()) {
    EXPECT_LE(std::llabs(w.clock_offset_ns), 50'000'000);
    offset.push_back(w.clock_offset_ns);
  }
  EXPECT_GT(std::set<int64_t>(offset.begin(), offset.end()).size(), 5u);
  for (size_t k = 0; k < r.files.size(); ++k) {
    const KinetoWorker& w = ex->workers()[k];
    std::multiset<std::pair<int64_t, int64_t>> table, file;
    for (size_t i = 0; i < s.table.size(); ++i) {
      if (s.table.dp[i] == w.dp && s.table.pp[i] == w.stage &&
          s.table.op_type[i] != OpType::kGc) {
        table.emplace(s.table.start_ns[i],
                      s.table.start_ns[i] + s.table.dur_ns[i]);
      }
    }
    for (const Event& e : r.files[k].events) {
      if (e.cat != "kernel") continue;
      const int64_t shift = kKinetoTimeOriginNs + w.clock_offset_ns;
      file.emplace(e.ts - shift, e.end() - shift);
    }
    EXPECT_EQ(table, file) << "rank " << k;
  }
  int differing = 0;
  Instances instances;
  ExpectSeqConsistent(r.files, &instances);
  ASSERT_FALSE(instances.empty());
  for (const auto& [key, members] : instances) {
    std::vector<int64_t> true_end, raw_end;
    for (const Event* e : members) {
      raw_end.push_back(e->end());
      true_end.push_back(e->end() - offset[static_cast<size_t>(e->rank)]);
    }
    ASSERT_EQ(true_end.size(), members.size());
    for (int64_t t : true_end) EXPECT_EQ(t, true_end[0]) << key.first;
    differing += std::set<int64_t>(raw_end.begin(), raw_end.end()).size() > 1;
  }
  EXPECT_GT(differing, 0);
}

TEST(KinetoWriterTest, InterleavedSkipsNoopSendsAndReceives) {
  Sim s = Simulated(kInterleaved);
  auto ex = KinetoExport::Build(s.table, s.meta, {});
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  simdjson::dom::parser parser;
  const Rendered r = RenderAll(*ex, parser);
  for (size_t k = 0; k < r.files.size(); ++k) {
    const KinetoWorker& w = ex->workers()[k];
    // Per step: stage 0 has no forward recv nor backward send for chunk 0,
    // the last stage no forward send nor backward recv for its last chunk
    // (6 microbatches each); the middle stage skips nothing.
    EXPECT_EQ(r.stats[k].skipped_noop_p2p, w.stage == 1 ? 0 : 2 * 2 * 6)
        << "rank " << k;
    ExpectLaunches(r.files[k]);
    ExpectCpuThread(r.files[k]);
    ExpectStreams(r.files[k]);
  }
  ExpectSeqConsistent(r.files);
}

TEST(KinetoWriterTest, OldNcclNamesAndDeterminism) {
  Sim s = Simulated(kOneFOneB);
  const KinetoExportOptions old =
      WithOffsets(s, 3, 1, {.nccl_names = NcclKernelNames::kOld});
  auto a = KinetoExport::Build(s.table, s.meta, old);
  auto b = KinetoExport::Build(s.table, s.meta, old);
  ASSERT_TRUE(a.ok() && b.ok());
  simdjson::dom::parser parser;
  const Rendered ra = RenderAll(*a, parser), rb = RenderAll(*b, parser);
  EXPECT_EQ(ra.texts, rb.texts);
  int nccl = 0;
  for (const RankFile& f : ra.files) {
    EXPECT_EQ(f.nccl_version, "2.17.1");
    for (const Event& e : f.events) {
      if (e.cat != "kernel" || e.pg_name.empty()) continue;
      EXPECT_EQ(e.name.rfind("ncclKernel_", 0), 0u) << e.name;
      ++nccl;
    }
  }
  EXPECT_GT(nccl, 0);
  auto fresh = RenderKinetoRank(s.table, s.meta, 2, old);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(*fresh, ra.texts[2]);
  // Another seed moves the clocks, nothing else.
  auto c = KinetoExport::Build(s.table, s.meta, WithOffsets(s, 3, 2));
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->workers()[0].clock_offset_ns, a->workers()[0].clock_offset_ns);
  auto zero = KinetoExport::Build(s.table, s.meta, {});
  ASSERT_TRUE(zero.ok());
  for (const KinetoWorker& w : zero->workers()) {
    EXPECT_EQ(w.clock_offset_ns, 0);
  }
  const std::string manifest = RenderKinetoManifest(*a, ra.stats, ".gz");
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(manifest).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(Str(doc["schema"]), "strag.kineto-export/1");
  EXPECT_EQ(Str(doc["ranks"].at(3)["file"]), "rank-3.pt.trace.json.gz");
  EXPECT_EQ(Int(doc["ranks"].at(3)["clock_offset_ns"]),
            a->workers()[3].clock_offset_ns);
}

TEST(KinetoWriterTest, TruncatesLongRankListsLikePyTorch) {
  Sim s = Simulated(R"(
job: {dp: 32, steps: 1}
comm: {dp_allgather_ms: 1, clip_ms: 0.1}
)");
  auto ex = KinetoExport::Build(s.table, s.meta, {.truncate_rank_lists = true});
  ASSERT_TRUE(ex.ok());
  std::string text;
  ex->Render(3, &text);
  simdjson::dom::parser parser;
  const RankFile f = Parse(text, parser);
  std::string first30 = "[0";
  for (int r = 1; r < 30; ++r) first30 += ", " + std::to_string(r);
  int collectives = 0;
  for (const Event& e : f.events) {
    if (e.pg_name.empty() || e.group_size == 1) continue;  // tp, embedding
    EXPECT_EQ(e.pg_ranks, first30 + ", ...]") << e.pg_desc;
    EXPECT_EQ(e.group_size, 32);
    ++collectives;
  }
  EXPECT_EQ(collectives, 2 * 3);  // AG, RS, clip: kernel + record_param_comms
  EXPECT_EQ(f.pg_ranks.at("0"), first30 + ", 30, 31]");
}

TEST(KinetoWriterTest, RejectsTablesItCannotExport) {
  Sim s = Simulated(kOneFOneB);
  EXPECT_FALSE(
      KinetoExport::Build(s.table, s.meta, {.kernels_per_compute = 0}).ok());
  trace::OpsTable generic = s.table;
  generic.op_type[5] = OpType::kAllReduce;
  auto bad = KinetoExport::Build(generic, s.meta, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("row 5"), std::string::npos);
  trace::OpsTable twice = s.table;
  for (size_t i = 0; i < twice.size(); ++i) {
    if (twice.dp[i] == 1 && twice.pp[i] == 0) twice.rank[i] = 0;
  }
  bad = KinetoExport::Build(twice, s.meta, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("rank 0"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(RenderKinetoRank(s.table, s.meta, 6, {}).ok());
}

}  // namespace
}  // namespace strag::ingest
