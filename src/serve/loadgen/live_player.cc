// SPDX-License-Identifier: Apache-2.0
#include "serve/loadgen/live_player.h"

#include <httplib.h>

#include <algorithm>
#include <array>
#include <utility>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "base/str_format.h"
#include "ingest/agent/agent_writer.h"
#include "sim/simulator.h"
#include "trace/op_type.h"

namespace strag::serve {
namespace {

using ingest::agent::StepRecord;
using trace::CollGroup;
using trace::OpType;

struct Layout {
  int32_t dp = 1, pp = 1, tp = 1, cp = 1, per_node = 8;
  int32_t World() const { return dp * pp * tp * cp; }
  int32_t Rank(int32_t d, int32_t s, int32_t c, int32_t t) const {
    return ((s * dp + d) * cp + c) * tp + t;
  }
};

CollGroup GroupOfOp(OpType t) {
  if (trace::IsP2p(t)) return CollGroup::kPp;
  return CollGroup::kDp;
}

// One chunk's records: per step, per traced worker (dp * pp + stage... by
// worker index d * pp + s), the record every rank of its TP x CP group
// sends.
struct ChunkRecords {
  std::vector<int64_t> step_span_ns;
  std::vector<std::vector<StepRecord>> by_step;  // [step][d * pp + s]
  // Median forward + backward over a stage's workers: [step][stage].
  std::vector<std::vector<int64_t>> stage_median_compute_ns;
};

// Length of the union of `iv` (sorted in place), minus what `cover` (a
// sorted, disjoint union) overlaps.
int64_t ExposedNs(std::vector<std::pair<int64_t, int64_t>>* iv,
                  const std::vector<std::pair<int64_t, int64_t>>& cover) {
  std::sort(iv->begin(), iv->end());
  int64_t total = 0;
  size_t c = 0;
  int64_t lo = INT64_MIN, hi = INT64_MIN;
  auto flush = [&] {
    if (hi <= lo) return;
    int64_t len = hi - lo;
    while (c < cover.size() && cover[c].second <= lo) ++c;
    for (size_t k = c; k < cover.size() && cover[k].first < hi; ++k) {
      len -= std::min(hi, cover[k].second) - std::max(lo, cover[k].first);
    }
    total += std::max<int64_t>(len, 0);
  };
  for (const auto& [a, b] : *iv) {
    if (a > hi) {
      flush();
      lo = a;
      hi = b;
    } else {
      hi = std::max(hi, b);
    }
  }
  flush();
  return total;
}

std::vector<std::pair<int64_t, int64_t>> Union(
    std::vector<std::pair<int64_t, int64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& x : iv) {
    if (!out.empty() && x.first <= out.back().second) {
      out.back().second = std::max(out.back().second, x.second);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

// What an agent in each traced worker would have measured: phase sums, and
// per process-group kind the time blocked in collectives, i.e. the time a
// collective of that kind is under way and no compute runs (a p2p send
// that overlaps the next forward blocks nothing).
ChunkRecords Aggregate(const sim::SimulatedJob& job, const Layout& l) {
  using Intervals = std::vector<std::pair<int64_t, int64_t>>;
  const size_t steps = job.steps.size();
  const size_t workers = static_cast<size_t>(l.dp) * static_cast<size_t>(l.pp);
  ChunkRecords c;
  c.by_step.assign(steps, std::vector<StepRecord>(workers));
  c.step_span_ns.assign(steps, 0);
  const trace::OpsTable t =
      sim::ToOpsTable(job, 0, static_cast<int64_t>(steps) - 1);
  std::vector<int64_t> lo(steps, INT64_MAX), hi(steps, INT64_MIN);
  std::vector<Intervals> compute(steps * workers);
  std::vector<std::array<Intervals, trace::kCollGroups>> comm(steps * workers);
  for (size_t i = 0; i < t.rank.size(); ++i) {
    const auto k = static_cast<size_t>(t.step[i]);
    const size_t w = static_cast<size_t>(t.dp[i]) * static_cast<size_t>(l.pp) +
                     static_cast<size_t>(t.pp[i]);
    StepRecord& r = c.by_step[k][w];
    const int64_t start = t.start_ns[i], dur = t.dur_ns[i];
    lo[k] = std::min(lo[k], start);
    hi[k] = std::max(hi[k], start + dur);
    switch (t.op_type[i]) {
      case OpType::kForwardCompute: r.fwd_ns += dur; break;
      case OpType::kBackwardCompute: r.bwd_ns += dur; break;
      case OpType::kOptimizer:
      case OpType::kOptimizerClipMainGrad: r.opt_ns += dur; break;
      default: break;
    }
    if (trace::IsIdealisedAsComm(t.op_type[i])) {
      const auto g = static_cast<size_t>(GroupOfOp(t.op_type[i]));
      comm[k * workers + w][g].emplace_back(start, start + dur);
      ++r.coll_n[g];
    } else if (dur > 0) {
      compute[k * workers + w].emplace_back(start, start + dur);
    }
  }
  for (size_t k = 0; k < steps; ++k) {
    c.step_span_ns[k] = std::max<int64_t>(hi[k] - lo[k], 0);
    for (size_t w = 0; w < workers; ++w) {
      const Intervals busy = Union(std::move(compute[k * workers + w]));
      for (size_t g = 0; g < trace::kCollGroups; ++g) {
        c.by_step[k][w].coll_ns[g] = ExposedNs(&comm[k * workers + w][g], busy);
      }
    }
  }
  // The batch each replica drew: what the agents' tokens() would report.
  const auto m = static_cast<size_t>(job.spec.job.microbatches);
  for (size_t k = 0; k < steps && !job.sequences.empty(); ++k) {
    for (int32_t d = 0; d < l.dp; ++d) {
      double tokens = 0, seqs = 0, s2 = 0;
      const size_t lane = k * static_cast<size_t>(l.dp) + static_cast<size_t>(d);
      for (size_t mb = 0; mb < m && (lane * m + mb) < job.sequences.size(); ++mb) {
        for (int64_t len : job.sequences[lane * m + mb]) {
          tokens += static_cast<double>(len);
          s2 += static_cast<double>(len) * static_cast<double>(len);
          seqs += 1;
        }
      }
      for (int32_t st = 0; st < l.pp; ++st) {
        StepRecord& r = c.by_step[k][static_cast<size_t>(d * l.pp + st)];
        r.tokens = tokens;
        r.seqs = seqs;
        r.sum_s2 = s2;
      }
    }
  }
  c.stage_median_compute_ns.assign(steps, std::vector<int64_t>(static_cast<size_t>(l.pp)));
  std::vector<int64_t> v;
  for (size_t k = 0; k < steps; ++k) {
    for (int32_t s = 0; s < l.pp; ++s) {
      v.clear();
      for (int32_t d = 0; d < l.dp; ++d) {
        const StepRecord& r = c.by_step[k][static_cast<size_t>(d * l.pp + s)];
        v.push_back(r.fwd_ns + r.bwd_ns);
      }
      std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
      c.stage_median_compute_ns[k][static_cast<size_t>(s)] = v[v.size() / 2];
    }
  }
  for (const sim::HostDelay& h : job.host_delays) {
    StepRecord& r = c.by_step[h.step][static_cast<size_t>(h.dp) *
                                          static_cast<size_t>(l.pp) +
                                      static_cast<size_t>(h.stage)];
    const auto ns = static_cast<int64_t>(static_cast<double>(h.seconds) * 1e9);
    if (h.kind == sim::HostDelay::Kind::kGc) {
      r.gc_ns += ns;
      ++r.gc_n;
      r.gc_gen = 2;
    } else {
      r.data_ns += ns;
    }
  }
  return c;
}

// True when `rank` shares its TP x CP group with an injected slow worker
// (active at `step`) but is not it: the simulator slows the whole traced
// worker, while in a real job only the slow GPU computes longer and its
// group peers wait for it in their TP collectives.
bool SlowPeer(const sim::JobSpec& spec, int64_t step, int32_t rank,
              const Layout& l, int64_t median) {
  if (l.tp * l.cp == 1 || median <= 0) return false;
  const int32_t group = l.tp * l.cp;
  for (const sim::StragglerSpec& st : spec.stragglers) {
    if (st.kind != sim::StragglerSpec::Kind::kSlowWorker || st.rank < 0 ||
        st.rank == rank || st.rank / group != rank / group) {
      continue;
    }
    if (!st.steps || (step >= st.steps->first && step <= st.steps->second)) {
      return true;
    }
  }
  return false;
}

// A slow rank's TP peer: its compute at the stage's median, the rest of the
// slow worker's compute spent waiting in TP collectives.
StepRecord AsTpPeerOfSlowRank(StepRecord r, int64_t median) {
  const int64_t compute = r.fwd_ns + r.bwd_ns;
  if (compute <= median) return r;
  const double scale = static_cast<double>(median) / static_cast<double>(compute);
  r.fwd_ns = static_cast<int64_t>(static_cast<double>(r.fwd_ns) * scale);
  r.bwd_ns = median - r.fwd_ns;
  const auto tp = static_cast<size_t>(CollGroup::kTp);
  r.coll_ns[tp] += compute - median;
  ++r.coll_n[tp];
  return r;
}

// The spec of chunk [from, from + n): its own seed, injections with their
// step ranges moved to the chunk (absent where they do not reach it).
sim::JobSpec ChunkSpec(const sim::JobSpec& spec, int64_t from, int64_t n,
                       int64_t chunk) {
  sim::JobSpec c = spec;
  c.job.steps = static_cast<int32_t>(n);
  c.job.seed = spec.job.seed + static_cast<uint64_t>(chunk);
  c.stragglers.clear();
  for (sim::StragglerSpec st : spec.stragglers) {
    if (st.steps) {
      const int64_t a = std::max(st.steps->first, from);
      const int64_t b = std::min(st.steps->second, from + n - 1);
      if (a > b) continue;
      st.steps = std::make_pair(a - from, b - from);
    }
    c.stragglers.push_back(st);
  }
  return c;
}

class Sender {
 public:
  Sender(const LivePlayOptions& o, LivePlayStats* stats)
      : client_(o.url), url_(o.url), stats_(stats) {
    client_.set_tcp_nodelay(true);
    client_.set_keep_alive(true);
    client_.set_read_timeout(30, 0);
    if (!o.token.empty()) {
      headers_.emplace("Authorization", "Bearer " + o.token);
    }
  }

  // Posts until acknowledged (a collector restarting is waited for), for at
  // most kPatienceS without an answer; gives up at once on a 4xx (bad
  // input is not retried).
  Status Post(const std::string& body) {
    constexpr double kPatienceS = 30;
    const auto start = std::chrono::steady_clock::now();
    for (int attempt = 0;; ++attempt) {
      ++stats_->requests;
      auto res = client_.Post("/v1/ingest", headers_, body, "application/x-ndjson");
      if (res && res->status == 200) {
        acked_ = true;
        return Status::Ok();
      }
      if (res && res->status >= 400 && res->status < 500 && res->status != 429) {
        return InvalidInput(StrFormat("the collector at %s answered %d: %s",
                                      url_.c_str(), res->status, res->body.c_str()));
      }
      const double waited = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      if (waited > kPatienceS) {
        const std::string why =
            res ? StrFormat("it answered %d", res->status)
                : "no answer: " + httplib::to_string(res.error()) + " error";
        const std::string text =
            StrFormat("the collector at %s did not acknowledge for %.0f s (%s)",
                      url_.c_str(), kPatienceS, why.c_str());
        // Never reached at all: the URL is wrong (or nothing listens).
        return acked_ ? IoError(text) : InvalidInput(text);
      }
      ++stats_->retries;
      std::this_thread::sleep_for(std::chrono::milliseconds(
          std::min(2000, 50 << std::min(attempt, 5))));
    }
  }

 private:
  httplib::Client client_;
  std::string url_;
  bool acked_ = false;
  httplib::Headers headers_;
  LivePlayStats* stats_;
};

}  // namespace

Result<LivePlayStats> PlayLive(
    const sim::JobSpec& spec, const LivePlayOptions& o,
    const std::function<void(const std::string&)>& progress) {
  LivePlayStats stats;
  const Layout l{spec.job.dp + spec.job.backup_workers, spec.job.pp,
                 spec.job.tp, spec.job.cp, spec.job.gpus_per_node};
  Sender sender(o, &stats);
  const int64_t epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  std::vector<int64_t> seq(static_cast<size_t>(l.World()), 0);
  std::string body;
  int64_t in_body = 0;
  auto flush = [&]() -> Status {
    if (in_body == 0) return Status::Ok();
    RETURN_IF_ERROR(sender.Post(body));
    body.clear();
    in_body = 0;
    return Status::Ok();
  };
  auto add = [&](auto&& append) -> Status {
    append();
    ++stats.records;
    if (++in_body >= o.records_per_request) return flush();
    return Status::Ok();
  };
  for (int32_t s = 0; s < l.pp; ++s) {
    for (int32_t d = 0; d < l.dp; ++d) {
      for (int32_t c = 0; c < l.cp; ++c) {
        for (int32_t t = 0; t < l.tp; ++t) {
          const int32_t rank = l.Rank(d, s, c, t);
          ingest::agent::RankInfo r;
          r.world_size = l.World();
          r.dp = d, r.pp = s, r.tp = t, r.cp = c;
          r.dp_size = l.dp, r.pp_size = l.pp, r.tp_size = l.tp, r.cp_size = l.cp;
          r.local_rank = rank % l.per_node;
          r.microbatches = spec.job.microbatches;
          r.usd_per_gpu_hour = spec.job.gpu_hour_usd;
          r.host = "node-" + std::to_string(rank / l.per_node);
          r.device = "sim";
          r.agent_version = "strag-simulate";
          RETURN_IF_ERROR(add([&] {
            ingest::agent::AppendRankLine({o.job, rank, epoch},
                                          ++seq[static_cast<size_t>(rank)], r, &body);
          }));
        }
      }
    }
  }
  RETURN_IF_ERROR(flush());
  const auto start = std::chrono::steady_clock::now();
  int64_t t_ns = epoch;
  const int64_t total = spec.job.steps;
  const int64_t chunk_steps = std::max<int64_t>(1, o.chunk_steps);
  for (int64_t from = 0, chunk = 0; from < total; from += chunk_steps, ++chunk) {
    const int64_t n = std::min(chunk_steps, total - from);
    sim::SimulateOptions so;
    so.truth = false;
    ASSIGN_OR_RETURN(sim::SimulatedJob job,
                     sim::Simulate(ChunkSpec(spec, from, n, chunk), so));
    const ChunkRecords rec = Aggregate(job, l);
    for (int64_t k = 0; k < n; ++k) {
      const auto ks = static_cast<size_t>(k);
      t_ns += rec.step_span_ns[ks];
      for (int32_t s = 0; s < l.pp; ++s) {
        for (int32_t d = 0; d < l.dp; ++d) {
          StepRecord r = rec.by_step[ks][static_cast<size_t>(d * l.pp + s)];
          r.step = from + k;
          r.step_ns = rec.step_span_ns[ks];
          r.t_end_ns = t_ns;
          const int64_t median = rec.stage_median_compute_ns[ks][static_cast<size_t>(s)];
          for (int32_t c = 0; c < l.cp; ++c) {
            for (int32_t t = 0; t < l.tp; ++t) {
              const int32_t rank = l.Rank(d, s, c, t);
              const StepRecord out = SlowPeer(spec, from + k, rank, l, median)
                                         ? AsTpPeerOfSlowRank(r, median)
                                         : r;
              RETURN_IF_ERROR(add([&] {
                ingest::agent::AppendStepLine(
                    {o.job, rank, epoch}, ++seq[static_cast<size_t>(rank)], out, &body);
              }));
            }
          }
        }
      }
      RETURN_IF_ERROR(flush());
      ++stats.steps;
      if (o.rate > 0) {
        std::this_thread::sleep_until(
            start + std::chrono::duration<double>(static_cast<double>(stats.steps) / o.rate));
      }
      if (progress && stats.steps % 100 == 0) {
        progress(StrFormat("%lld of %lld steps played",
                           static_cast<long long>(stats.steps),
                           static_cast<long long>(total)));
      }
    }
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace strag::serve
