// SPDX-License-Identifier: Apache-2.0
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

#include "base/f32.h"
#include "base/partition.h"
#include "sim/footprint.h"
#include "sim/random.h"

namespace strag::sim {
namespace {

using trace::OpType;
using Kind = StragglerSpec::Kind;

constexpr double kMs = 1e-3;

// Streams of random draws (DrawKey::stream).
enum Stream : uint64_t {
  kComputeNoise = 1,
  kCommNoise,
  kSequence,
  kActive,
  kGcDraw,
  kGcWhere,
};

// The Megatron rank layout of the job.
struct Layout {
  int32_t dp, pp, tp, cp, gpus_per_node;
  int64_t Rank(int32_t d, int32_t s, int32_t c, int32_t t) const {
    return ((int64_t{s} * dp + d) * cp + c) * tp + t;
  }
  int32_t Dp(int64_t r) const {
    return static_cast<int32_t>(r / (tp * cp) % dp);
  }
  int32_t Pp(int64_t r) const {
    return static_cast<int32_t>(r / (int64_t{tp} * cp * dp));
  }
  int32_t Tp(int64_t r) const { return static_cast<int32_t>(r % tp); }
  int32_t Cp(int64_t r) const { return static_cast<int32_t>(r / tp % cp); }
  int32_t Node(int64_t r) const {
    return static_cast<int32_t>(r / gpus_per_node);
  }
  int64_t World() const { return int64_t{dp} * pp * tp * cp; }
};

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kSlowWorker:
      return "slow_worker";
    case Kind::kGcPause:
      return "gc_pause";
    case Kind::kSlowLink:
      return "slow_link";
    case Kind::kDataloaderStall:
      return "dataloader_stall";
  }
  return "";
}

// A zero duration stays zero: noise varies work, it does not create it.
double ApplyNoise(const NoiseSpec& noise, double x, const DrawKey& key) {
  if (x == 0.0) return 0.0;
  switch (noise.kind) {
    case NoiseSpec::Kind::kNone:
      return x;
    case NoiseSpec::Kind::kLognormal:
      return x * std::exp(noise.sigma * StandardNormal(key) -
                          noise.sigma * noise.sigma / 2);
    case NoiseSpec::Kind::kNormal:
      return std::max(0.0, x + noise.sd_ms * kMs * StandardNormal(key));
    case NoiseSpec::Kind::kExponential:
      return -x * std::log(Uniform(key));
  }
  return x;
}

// Fills the per-(node, lane) costs and launch delays of a job, with every
// injection but one (`skip`), and records the steps each injection acts on.
class JobFiller {
 public:
  JobFiller(const SimulatedJob& job)
      : job_(job),
        spec_(job.spec),
        layout_{job.dp_replicas, spec_.job.pp, spec_.job.tp, spec_.job.cp,
                spec_.job.gpus_per_node},
        lanes_(job.num_lanes()),
        m_(spec_.job.microbatches) {
    StageFactors();
  }

  void Fill(int64_t skip, BigVector<double>* cost, BigVector<float>* delay,
            std::vector<std::vector<int64_t>>* affected,
            std::vector<HostDelay>* host_delays = nullptr) {
    skip_ = skip;
    host_delays_ = host_delays;
    affected_ = affected;
    if (affected_) affected_->assign(spec_.stragglers.size(), {});
    cost->resize(job_.num_nodes() * lanes_);
    delay->assign(job_.num_nodes() * lanes_, 0.0f);
    PrecomputeFactors();
    for (size_t v = 0; v < job_.num_nodes(); ++v)
      CostRow(v, cost->data() + v * lanes_);
    DropSlowest(cost);
    for (size_t i = 0; i < spec_.stragglers.size(); ++i) {
      if (static_cast<int64_t>(i) == skip_) continue;
      const StragglerSpec& st = spec_.stragglers[i];
      if (st.kind == Kind::kGcPause) GcPauses(i, delay);
      if (st.kind == Kind::kDataloaderStall) Stalls(i, delay);
      if (affected_ &&
          (st.kind == Kind::kSlowWorker || st.kind == Kind::kSlowLink)) {
        for (size_t k = 0; k < job_.steps.size(); ++k) {
          if (Active(i, k)) (*affected_)[i].push_back(job_.steps[k]);
        }
      }
    }
  }

 private:
  void StageFactors() {
    const ModelSection& model = spec_.model;
    const int32_t pp = spec_.job.pp;
    std::vector<double> layers(static_cast<size_t>(pp), 1.0);
    if (!model.layers_per_stage.empty()) {
      for (int32_t s = 0; s < pp; ++s)
        layers[static_cast<size_t>(s)] =
            model.layers_per_stage[static_cast<size_t>(s)];
    } else if (model.layers > 0) {
      std::fill(layers.begin(), layers.end(), double(model.layers) / pp);
    }
    double total = 0;
    for (double x : layers) total += x;
    layers.back() += model.loss_layer_cost;
    stage_factor_.resize(layers.size());
    for (size_t s = 0; s < layers.size(); ++s) {
      stage_factor_[s] = layers[s] / (total / pp);
    }
  }

  // job.drop_slowest: in each step the k (replica, microbatch) pairs of
  // most compute (forwards and backwards of every stage) lose it (the
  // planner's drop_slowest as ground truth).
  void DropSlowest(BigVector<double>* cost) const {
    const auto k = static_cast<size_t>(spec_.job.drop_slowest);
    if (k == 0) return;
    const auto dp = static_cast<size_t>(layout_.dp);
    const auto m = static_cast<size_t>(m_);
    const size_t n = job_.num_nodes();
    std::vector<double> work(dp * m);
    std::vector<size_t> order(dp * m);
    std::vector<uint8_t> dropped(dp * m);
    for (size_t step = 0; step < job_.steps.size(); ++step) {
      std::fill(work.begin(), work.end(), 0.0);
      for (size_t v = 0; v < n; ++v) {
        const int32_t mb = job_.schedule.microbatch[v];
        if (mb < 0 || !trace::IsCompute(job_.schedule.model.keys[v].type)) {
          continue;
        }
        for (size_t d = 0; d < dp; ++d) {
          work[d * m + static_cast<size_t>(mb)] +=
              (*cost)[v * lanes_ + step * dp + d];
        }
      }
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return work[a] > work[b]; });
      std::fill(dropped.begin(), dropped.end(), 0);
      for (size_t q = 0; q < k && q < order.size(); ++q) dropped[order[q]] = 1;
      for (size_t v = 0; v < n; ++v) {
        const int32_t mb = job_.schedule.microbatch[v];
        if (mb < 0 || !trace::IsCompute(job_.schedule.model.keys[v].type)) {
          continue;
        }
        for (size_t d = 0; d < dp; ++d) {
          if (dropped[d * m + static_cast<size_t>(mb)]) {
            (*cost)[v * lanes_ + step * dp + d] = 0;
          }
        }
      }
    }
  }

  // Whether injection `i` acts on step index `k`.
  bool Active(size_t i, size_t k) const {
    const StragglerSpec& st = spec_.stragglers[i];
    const auto step = static_cast<int64_t>(k);
    if (st.steps && (step < st.steps->first || step > st.steps->second))
      return false;
    if (st.probability >= 1.0) return true;
    return Uniform({spec_.job.seed, kActive, i, k}) < st.probability;
  }

  double CommMs(OpType type) const {
    const CommSection& c = spec_.comm;
    switch (type) {
      case OpType::kForwardSend:
      case OpType::kForwardRecv:
      case OpType::kBackwardSend:
      case OpType::kBackwardRecv:
        return c.p2p_ms;
      case OpType::kParamsAllGather:
        return c.dp_allgather_ms;
      case OpType::kGradsReduceScatter:
      case OpType::kSeparateGradsAllReduce:
        return c.dp_reducescatter_ms;
      case OpType::kLayernormGradsAllReduce:
        return c.layernorm_ms;
      case OpType::kEmbeddingGradsAllReduce:
        return c.embedding_ms;
      case OpType::kOptimizerClipMainGrad:
        return c.clip_ms;
      default:
        return 0.0;
    }
  }

  // Per-Fill tables, so that the per-(node, lane) loop only multiplies:
  // the slow-worker factor of every (step, dp, stage), which injections act
  // on which step, which DP groups / workers a slow link's node touches, and
  // the sequence factor of every (lane, microbatch).
  void PrecomputeFactors() {
    const size_t steps = job_.steps.size(),
                 dp = static_cast<size_t>(layout_.dp);
    const size_t pp = static_cast<size_t>(layout_.pp);
    active_.assign(spec_.stragglers.size() * steps, 0);
    for (size_t i = 0; i < spec_.stragglers.size(); ++i) {
      for (size_t k = 0; k < steps; ++k) {
        active_[i * steps + k] =
            static_cast<int64_t>(i) != skip_ && Active(i, k);
      }
    }
    slow_.assign(steps * dp * pp * 2, 1.0);
    links_.clear();
    for (size_t i = 0; i < spec_.stragglers.size(); ++i) {
      const StragglerSpec& st = spec_.stragglers[i];
      if (st.kind == Kind::kSlowWorker) {
        const auto d = static_cast<size_t>(layout_.Dp(st.rank));
        const auto st_pp = static_cast<size_t>(layout_.Pp(st.rank));
        for (size_t k = 0; k < steps; ++k) {
          if (!active_[i * steps + k]) continue;
          // [.. * 2]: forward, [.. * 2 + 1]: backward (`op` may pick one).
          const size_t at = ((k * dp + d) * pp + st_pp) * 2;
          if (st.pass != StragglerSpec::Pass::kBackward) slow_[at] *= st.factor;
          if (st.pass != StragglerSpec::Pass::kForward) {
            slow_[at + 1] *= st.factor;
          }
        }
      }
      if (st.kind == Kind::kSlowLink) links_.push_back(LinkOf(i));
    }
    if (seq_factor_.empty()) {
      seq_factor_.resize(lanes_ * static_cast<size_t>(m_));
      for (size_t l = 0; l < lanes_; ++l) {
        for (int32_t mb = 0; mb < m_; ++mb) {
          seq_factor_[l * static_cast<size_t>(m_) + static_cast<size_t>(mb)] =
              SequenceFactor(l, mb);
        }
      }
    }
  }

  // Where a slow link's node sits: its workers and the stages they are on.
  struct Link {
    size_t injection;
    double factor;
    std::vector<uint8_t> on_worker;  // [d * pp + s]
    std::vector<uint8_t> on_stage;   // [s]
    bool any = false;
  };
  Link LinkOf(size_t i) const {
    const StragglerSpec& st = spec_.stragglers[i];
    const auto pp = static_cast<size_t>(layout_.pp);
    Link link{i, st.factor,
              std::vector<uint8_t>(static_cast<size_t>(layout_.dp) * pp, 0),
              std::vector<uint8_t>(pp, 0)};
    const int64_t first = int64_t{st.node} * layout_.gpus_per_node;
    for (int64_t r = first;
         r < first + layout_.gpus_per_node && r < layout_.World(); ++r) {
      const auto d = static_cast<size_t>(layout_.Dp(r)),
                 s = static_cast<size_t>(layout_.Pp(r));
      link.on_worker[d * pp + s] = 1;
      link.on_stage[s] = 1;
      link.any = true;
    }
    return link;
  }

  // Whether the group of comm op `type` of worker (d, s) has a rank on the
  // link's node.
  bool Touches(const Link& link, OpType type, int32_t d, int32_t s) const {
    const int32_t pp = layout_.pp;
    auto on = [&](int32_t ss) {
      return link.on_worker[static_cast<size_t>(d * pp + ss)] != 0;
    };
    switch (type) {
      case OpType::kForwardSend:
      case OpType::kBackwardRecv:
        return on(s) || on((s + 1) % pp);
      case OpType::kForwardRecv:
      case OpType::kBackwardSend:
        return on(s) || on((s - 1 + pp) % pp);
      case OpType::kEmbeddingGradsAllReduce:
        return on(0) || on(pp - 1);
      case OpType::kLayernormGradsAllReduce:
        return on(s);
      case OpType::kParamsAllGather:
      case OpType::kGradsReduceScatter:
      case OpType::kSeparateGradsAllReduce:
        return link.on_stage[static_cast<size_t>(s)] != 0;
      case OpType::kOptimizerClipMainGrad:
        return link.any;
      default:
        return false;
    }
  }

  void CostRow(size_t v, double* row) const {
    const graph::OpKey& key = job_.schedule.model.keys[v];
    const size_t dp = static_cast<size_t>(layout_.dp),
                 steps = job_.steps.size();
    const auto pp = static_cast<size_t>(layout_.pp);
    const auto stage = static_cast<size_t>(key.stage);
    const uint64_t seed = spec_.job.seed;
    if (key.type == OpType::kOptimizer || key.type == OpType::kGc) {
      const double x = key.type == OpType::kOptimizer
                           ? spec_.compute.optimizer_ms * kMs
                           : 0.0;
      std::fill(row, row + lanes_, x);
      return;
    }
    if (trace::IsCompute(key.type)) {
      const double ms = key.type == OpType::kForwardCompute
                            ? spec_.compute.forward_ms
                            : spec_.compute.backward_ms;
      const double base = ms * kMs * stage_factor_[stage] / spec_.job.vpp;
      const size_t backward = key.type != OpType::kForwardCompute;
      const auto mb =
          static_cast<size_t>(std::max(job_.schedule.microbatch[v], 0));
      const std::vector<int32_t>& per = spec_.job.microbatches_per_replica;
      for (size_t l = 0; l < lanes_; ++l) {
        const size_t k = l / dp, d = l % dp;
        const double x = base * seq_factor_[l * static_cast<size_t>(m_) + mb] *
                         slow_[((k * dp + d) * pp + stage) * 2 + backward];
        row[l] =
            ApplyNoise(spec_.compute.noise, x, {seed, kComputeNoise, v, k, d});
        // A replica with fewer microbatches runs the surplus empty.
        if (d < per.size() && mb >= static_cast<size_t>(per[d])) row[l] = 0;
      }
      return;
    }
    const double base = CommMs(key.type) * kMs;
    for (size_t l = 0; l < lanes_; ++l) {
      const size_t k = l / dp, d = l % dp;
      double x = base;
      for (const Link& link : links_) {
        if (active_[link.injection * steps + k] &&
            Touches(link, key.type, static_cast<int32_t>(d), key.stage)) {
          x *= link.factor;
        }
      }
      row[l] = ApplyNoise(spec_.comm.noise, x, {seed, kCommNoise, v, k, d});
    }
  }

  double SequenceFactor(size_t lane, int32_t mb) const {
    const SequenceSection& seq = spec_.sequences;
    if (mb < 0 || job_.sequences.empty()) return 1.0;
    const auto& lengths = job_.sequences[lane * static_cast<size_t>(m_) +
                                         static_cast<size_t>(mb)];
    if (reference_ <= 0) reference_ = ReferenceLength();
    const double ref = reference_;
    // Normalised by the nominal count: a balanced microbatch (sequences
    // moved between microbatches) may hold more or fewer.
    const double n = static_cast<double>(std::max(1, seq.per_microbatch));
    double lin = 0, quad = 0;
    for (int64_t s : lengths) {
      lin += static_cast<double>(s);
      quad += static_cast<double>(s) * static_cast<double>(s);
    }
    const double denom = seq.linear * n * ref + seq.quadratic * n * ref * ref;
    return denom > 0 ? (seq.linear * lin + seq.quadratic * quad) / denom : 1.0;
  }

 public:
  double ReferenceLength() const {
    const SequenceSection& seq = spec_.sequences;
    switch (seq.kind) {
      case SequenceSection::Kind::kFixed:
        return static_cast<double>(seq.length);
      case SequenceSection::Kind::kLognormal:
        return seq.median;
      case SequenceSection::Kind::kFile: {
        if (seq.lengths.empty()) return 1.0;
        std::vector<int64_t> sorted(seq.lengths);
        std::nth_element(
            sorted.begin(),
            sorted.begin() + static_cast<ptrdiff_t>(sorted.size() / 2),
            sorted.end());
        return static_cast<double>(sorted[sorted.size() / 2]);
      }
    }
    return 1.0;
  }

 private:
  // The traced workers whose TP x CP group holds a selected rank of `st`.
  std::vector<std::pair<int32_t, int32_t>> Workers(
      const StragglerSpec& st) const {
    std::vector<std::pair<int32_t, int32_t>> out;
    if (st.all_ranks) {
      for (int32_t s = 0; s < layout_.pp; ++s) {
        for (int32_t d = 0; d < layout_.dp; ++d) out.emplace_back(d, s);
      }
      return out;
    }
    std::vector<int64_t> ranks(st.ranks);
    if (st.rank >= 0) ranks.push_back(st.rank);
    for (int64_t r : ranks) out.emplace_back(layout_.Dp(r), layout_.Pp(r));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  size_t ForwardNode(int32_t stage, int32_t seq) const {
    return static_cast<size_t>(
        job_.schedule.model.index.Find({OpType::kForwardCompute, seq, stage}));
  }

  void GcPauses(size_t i, BigVector<float>* delay) {
    const StragglerSpec& st = spec_.stragglers[i];
    const auto pause = static_cast<float>(st.pause_ms * kMs);
    const int32_t forwards = m_ * spec_.job.vpp;
    const auto workers = Workers(st);
    const int64_t group = int64_t{layout_.tp} * layout_.cp;
    for (size_t k = 0; k < job_.steps.size(); ++k) {
      const auto step = static_cast<int64_t>(k);
      if (st.steps && (step < st.steps->first || step > st.steps->second))
        continue;
      bool any = false;
      for (auto [d, s] : workers) {
        int32_t where = 0;
        if (st.planned_every > 0) {
          if (step % st.planned_every != 0) continue;
          // A synchronised collection runs on every rank at once at the
          // step boundary: a later stage's first forward waits for its
          // input, which comes after the pause, so only the first stage's
          // shows it (a launch delay there would add up along the pipe).
          if (s > 0) {
            any = true;
            continue;
          }
        } else {
          bool paused = false;
          for (int64_t g = 0; g < group && !paused; ++g) {
            const int64_t rank = layout_.Rank(d, s, 0, 0) + g;
            paused =
                Uniform({spec_.job.seed, kGcDraw + (i << 8),
                         static_cast<uint64_t>(rank), k}) < st.rate_per_step;
          }
          if (!paused) continue;
          where = static_cast<int32_t>(
              Uniform({spec_.job.seed, kGcWhere, i, k,
                       static_cast<uint64_t>(layout_.Rank(d, s, 0, 0))}) *
              forwards);
        }
        const size_t lane =
            k * static_cast<size_t>(layout_.dp) + static_cast<size_t>(d);
        (*delay)[ForwardNode(s, std::min(where, forwards - 1)) * lanes_ +
                 lane] += pause;
        if (host_delays_) {
          host_delays_->push_back({k, d, s, HostDelay::Kind::kGc, pause});
        }
        any = true;
      }
      if (any && affected_) (*affected_)[i].push_back(job_.steps[k]);
    }
  }

  // Each selected worker stalls independently with `probability` per step.
  void Stalls(size_t i, BigVector<float>* delay) {
    const StragglerSpec& st = spec_.stragglers[i];
    const auto stall = static_cast<float>(st.stall_ms * kMs);
    const auto workers = Workers(st);
    for (size_t k = 0; k < job_.steps.size(); ++k) {
      const auto step = static_cast<int64_t>(k);
      if (st.steps && (step < st.steps->first || step > st.steps->second))
        continue;
      bool any = false;
      for (auto [d, s] : workers) {
        const auto worker = static_cast<uint64_t>(layout_.Rank(d, s, 0, 0));
        if (st.probability < 1.0 && Uniform({spec_.job.seed, kActive, i, k,
                                             worker + 1}) >= st.probability) {
          continue;
        }
        const size_t lane =
            k * static_cast<size_t>(layout_.dp) + static_cast<size_t>(d);
        (*delay)[ForwardNode(s, 0) * lanes_ + lane] += stall;
        if (host_delays_) {
          host_delays_->push_back({k, d, s, HostDelay::Kind::kData, stall});
        }
        any = true;
      }
      if (any && affected_) (*affected_)[i].push_back(job_.steps[k]);
    }
  }

  const SimulatedJob& job_;
  const JobSpec& spec_;
  Layout layout_;
  size_t lanes_;
  int32_t m_;
  std::vector<double> stage_factor_;
  std::vector<uint8_t> active_;  // [injection * steps + step]
  std::vector<double> slow_;  // [((step * dp + d) * pp + stage) * 2 + bwd]
  std::vector<Link> links_;
  std::vector<double> seq_factor_;  // [lane * microbatches + microbatch]
  mutable double reference_ = 0;    // the reference sequence length
  int64_t skip_ = -1;
  std::vector<std::vector<int64_t>>* affected_ = nullptr;
  std::vector<HostDelay>* host_delays_ = nullptr;
};

void DrawSequences(SimulatedJob* job, double reference) {
  const SequenceSection& seq = job->spec.sequences;
  const size_t count =
      job->num_lanes() * static_cast<size_t>(job->spec.job.microbatches);
  job->sequences.assign(count, {});
  const auto n = static_cast<size_t>(std::max(1, seq.per_microbatch));
  for (size_t idx = 0; idx < count; ++idx) {
    auto& lengths = job->sequences[idx];
    for (size_t j = 0; j < n; ++j) {
      switch (seq.kind) {
        case SequenceSection::Kind::kFixed:
          lengths.push_back(seq.length);
          break;
        case SequenceSection::Kind::kLognormal: {
          const double z =
              StandardNormal({job->spec.job.seed, kSequence, idx, j});
          // Clamped before rounding: a draw beyond int64 (a huge median or
          // sigma) has no llround.
          const double x = seq.median * std::exp(seq.sigma * z);
          lengths.push_back(
              x >= static_cast<double>(seq.max)
                  ? seq.max
                  : std::clamp<int64_t>(std::llround(x), 1, seq.max));
          break;
        }
        case SequenceSection::Kind::kFile:
          lengths.push_back(
              seq.lengths.empty()
                  ? static_cast<int64_t>(reference)
                  : seq.lengths[(idx * n + j) % seq.lengths.size()]);
          break;
      }
    }
  }
}

// The planner's sequence balancing applied to the drawn sequences, step by
// step, with the spec's cost (sequences.balance, base/partition.h).
void BalanceSequences(SimulatedJob* job) {
  const SequenceSection& seq = job->spec.sequences;
  if (seq.balance == SequenceSection::Balance::kNone) return;
  const auto m = static_cast<size_t>(job->spec.job.microbatches);
  const auto dp = static_cast<size_t>(job->dp_replicas);
  double cap = 0;  // the largest drawn microbatch, in tokens
  std::vector<std::vector<int32_t>> step(dp * m);
  for (const auto& mb : job->sequences) {
    double tokens = 0;
    for (int64_t x : mb) tokens += static_cast<double>(x);
    cap = std::max(cap, tokens);
  }
  for (size_t k = 0; k < job->steps.size(); ++k) {
    for (size_t j = 0; j < dp * m; ++j) {
      const auto& drawn = job->sequences[k * dp * m + j];
      step[j].assign(drawn.begin(), drawn.end());
    }
    const std::vector<std::vector<int32_t>> packed = RepackSequences(
        step, static_cast<int32_t>(dp), static_cast<int32_t>(m), seq.linear,
        seq.quadratic, cap, seq.balance == SequenceSection::Balance::kDp,
        nullptr, nullptr);
    for (size_t j = 0; j < dp * m; ++j) {
      job->sequences[k * dp * m + j].assign(packed[j].begin(),
                                             packed[j].end());
    }
  }
}

replay::StepTimes Run(const SimulatedJob& job, const BigVector<double>& cost,
                      const BigVector<float>& delay, replay::ReplayTimes* keep,
                      const replay::WindowVisitor& visit = nullptr) {
  const size_t n = job.num_nodes(), lanes = job.num_lanes();
  const auto rows = replay::DenseRows(cost, n, lanes);
  const std::vector<double> unused(n, 0.0);
  std::vector<uint32_t> sync;
  for (size_t l = 0; l <= lanes; l += static_cast<size_t>(job.dp_replicas)) {
    sync.push_back(static_cast<uint32_t>(l));
  }
  const replay::ReplayInput input{
      .graph = &job.schedule.model.graph,
      .num_lanes = lanes,
      .cost = {.rows = rows, .values = unused},
      .launch_delay = delay,
      .sync_offsets = sync,
      .optimizer_nodes = job.schedule.model.optimizer_nodes,
      .dp_quorum = job.spec.job.backup_workers > 0
                       ? static_cast<uint32_t>(job.spec.job.dp)
                       : 0u,
  };
  replay::ReplayWorkspace workspace;
  return replay::Replay(input, &workspace, keep, visit);
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", s);
  return buf;
}

std::string SourceOf(const JobSpec& spec) {
  return spec.name.empty() ? "job spec" : spec.name;
}

// Every drawn duration and host delay within the limit of one op
// (kMaxOpSeconds): the spec's durations are validated one by one, but their
// products with stage, sequence and straggler factors and heavy-tailed noise
// draws are only known here. NaN fails too.
Status CheckDrawnDurations(const SimulatedJob& job) {
  const size_t lanes = job.num_lanes();
  const auto dp = static_cast<size_t>(job.dp_replicas);
  for (size_t v = 0; v < job.num_nodes(); ++v) {
    const double* cost = job.cost.data() + v * lanes;
    const float* delay = job.launch_delay.data() + v * lanes;
    bool bad = false;
    for (size_t l = 0; l < lanes; ++l) {
      if (!(cost[l] <= kMaxOpSeconds) || !(delay[l] <= kMaxOpSeconds)) {
        bad = true;
      }
    }
    if (!bad) continue;
    for (size_t l = 0; l < lanes; ++l) {
      const bool slow = !(cost[l] <= kMaxOpSeconds);
      if (!slow && delay[l] <= kMaxOpSeconds) continue;
      const graph::OpKey& key = job.schedule.model.keys[v];
      const std::string where = "step " + std::to_string(l / dp) + ", dp " +
                                std::to_string(l % dp) + ", stage " +
                                std::to_string(key.stage) + ": ";
      const std::string what =
          slow ? "a drawn " + std::string(trace::OpTypeName(key.type)) +
                     " of " + Seconds(cost[l]) +
                     " s (the spec's duration times the stage, sequence and "
                     "straggler factors and the noise draw) exceeds"
               : "host delays (gc_pause, dataloader_stall) of " +
                     Seconds(delay[l]) + " s before one forward exceed";
      return InvalidInput(SourceOf(job.spec) + ": " + where + what +
                          " the limit of 1e6 s for one op; lower them or the "
                          "noise");
    }
  }
  return Status::Ok();
}

// The whole trace within kMaxTraceSeconds (steps laid end to end 1 ms
// apart, as ToOpsTable writes them), so that every time of it is an int64
// nanosecond count with headroom.
Status CheckTraceLength(const SimulatedJob& job) {
  double total = 0;
  for (double span : job.step_times.span) total += span + kMs;
  if (total <= kMaxTraceSeconds) return Status::Ok();
  return InvalidInput(
      SourceOf(job.spec) + ": the simulated trace would last " +
      Seconds(total) + " s (" + std::to_string(job.steps.size()) +
      " steps), beyond the limit of 1e9 s of a trace; simulate fewer "
      "steps or shorter durations");
}

void DescribeTruth(const SimulatedJob& job, size_t i, TruthRecord* t) {
  const StragglerSpec& st = job.spec.stragglers[i];
  const Layout layout{job.dp_replicas, job.spec.job.pp, job.spec.job.tp,
                      job.spec.job.cp, job.spec.job.gpus_per_node};
  t->kind = KindName(st.kind);
  t->factor = st.factor;
  t->node = st.node;
  if (st.rank < 0 || st.all_ranks) return;
  t->rank = st.rank;
  t->dp = layout.Dp(st.rank);
  t->pp = layout.Pp(st.rank);
  t->tp = layout.Tp(st.rank);
  t->cp = layout.Cp(st.rank);
  t->node = layout.Node(st.rank);
  t->worker_rank = layout.Rank(t->dp, t->pp, 0, 0);
  for (int32_t r = 0; r < layout.tp; ++r) {
    t->tp_group.push_back(layout.Rank(t->dp, t->pp, t->cp, r));
  }
}

}  // namespace

int64_t SimulatedJob::WorkerRank(int32_t dp, int32_t stage) const {
  return ((int64_t{stage} * dp_replicas + dp) * spec.job.cp) * spec.job.tp;
}

Result<SimulatedJob> Simulate(const JobSpec& spec,
                              const SimulateOptions& options) {
  RETURN_IF_ERROR(ValidateJobSpec(spec));
  // Sizes the replay indexes with 32 bits (node ids, lane offsets); the
  // CLI refuses far smaller jobs by their memory (EstimateFootprint).
  const Footprint size = EstimateFootprint(spec);
  if (size.ops_per_step > std::numeric_limits<int32_t>::max() ||
      size.lanes > std::numeric_limits<uint32_t>::max()) {
    return InvalidInput(
        SourceOf(spec) + ": the job is too large to simulate: " +
        std::to_string(size.ops_per_step) +
        " ops per step of each DP replica (at most 2^31 - 1) and " +
        std::to_string(size.lanes) +
        " (step, DP replica) pairs (at most 2^32 - 1)");
  }
  SimulatedJob job;
  job.spec = spec;
  job.dp_replicas = spec.job.dp + spec.job.backup_workers;
  for (int64_t k = 0; k < spec.job.steps; ++k) job.steps.push_back(k);
  ASSIGN_OR_RETURN(
      job.schedule,
      BuildScheduleModel(spec.job.pp, spec.job.vpp, spec.job.microbatches,
                         int64_t{job.dp_replicas} * spec.job.cp > 1));
  JobFiller filler(job);
  DrawSequences(&job, filler.ReferenceLength());
  BalanceSequences(&job);
  std::vector<std::vector<int64_t>> affected;
  filler.Fill(-1, &job.cost, &job.launch_delay, &affected, &job.host_delays);
  RETURN_IF_ERROR(CheckDrawnDurations(job));
  if (options.keep_times) {
    job.step_times = Run(job, job.cost, job.launch_delay, &job.times);
  } else {
    const size_t n = job.num_nodes(), lanes = job.num_lanes();
    job.start32.resize(n * lanes);
    job.step_times =
        Run(job, job.cost, job.launch_delay, nullptr,
            [&](const replay::WindowTimes& w) {
              for (size_t v = 0; v < n; ++v) {
                for (size_t l = 0; l < w.lanes; ++l) {
                  job.start32[v * lanes + w.lo + l] =
                      static_cast<float>(w.start[v * w.stride + l]);
                }
              }
            });
  }
  RETURN_IF_ERROR(CheckTraceLength(job));
  const BigVector<float> no_delay;
  const double with = PairwiseMean(job.step_times.opt);
  const double with_blocking =
      options.truth ? PairwiseMean(Run(job, job.cost, no_delay, nullptr).opt)
                    : 0.0;
  for (size_t i = 0; i < spec.stragglers.size(); ++i) {
    TruthRecord t;
    DescribeTruth(job, i, &t);
    t.steps = affected[i];
    if (options.truth) {
      BigVector<double> cost;
      BigVector<float> delay;
      filler.Fill(static_cast<int64_t>(i), &cost, &delay, nullptr);
      const double without = PairwiseMean(Run(job, cost, delay, nullptr).opt);
      t.slowdown = with / without;
      t.excess_step_ms = (with - without) / kMs;
      const double without_blocking =
          PairwiseMean(Run(job, cost, no_delay, nullptr).opt);
      t.blocking_slowdown = with_blocking / without_blocking;
      t.blocking_excess_step_ms = (with_blocking - without_blocking) / kMs;
    }
    job.truth.push_back(std::move(t));
  }
  return job;
}

trace::OpsTable ToOpsTable(const SimulatedJob& job, int64_t first_step,
                           int64_t last_step) {
  trace::OpsTable table;
  const size_t n = job.num_nodes(), lanes = job.num_lanes();
  const auto dp = static_cast<size_t>(job.dp_replicas);
  const int32_t pp = job.spec.job.pp;
  trace::ExtraColumn seq_lens{"seq_lens", {}};
  int64_t origin_ns = 0;
  for (size_t k = 0; k < job.steps.size(); ++k) {
    const int64_t step = job.steps[k];
    const int64_t span_ns = std::llround(job.step_times.span[k] * 1e9);
    if (step < first_step || step > last_step) {
      origin_ns += span_ns + 1'000'000;
      continue;
    }
    for (int32_t s = 0; s < pp; ++s) {
      for (size_t d = 0; d < dp; ++d) {
        const size_t l = k * dp + d;
        for (size_t v = 0; v < n; ++v) {
          const graph::OpKey& key = job.schedule.model.keys[v];
          if (key.stage != s) continue;
          const int64_t start =
              std::llround(job.times.start[v * lanes + l] * 1e9);
          const int64_t end = std::llround(job.times.end[v * lanes + l] * 1e9);
          const int32_t mb = job.schedule.microbatch[v];
          const int32_t chunk = job.schedule.chunk[v];
          table.rank.push_back(
              static_cast<int32_t>(job.WorkerRank(static_cast<int32_t>(d), s)));
          table.dp.push_back(static_cast<int32_t>(d));
          table.pp.push_back(s);
          table.step.push_back(step);
          table.op_type.push_back(key.type);
          table.seq_id.push_back(key.seq_id);
          table.chunk.push_back(chunk);
          table.microbatch.push_back(trace::IsCompute(key.type) ? mb : -1);
          table.global_chunk.push_back(
              trace::IsCompute(key.type) ? chunk * pp + s : -1);
          table.start_ns.push_back(origin_ns + start);
          table.dur_ns.push_back(std::max<int64_t>(0, end - start));
          table.tp.push_back(0);
          int64_t tokens = 0;
          std::string lens;
          if (trace::IsCompute(key.type) && mb >= 0) {
            for (int64_t x : job.sequences[l * static_cast<size_t>(
                                                   job.spec.job.microbatches) +
                                           static_cast<size_t>(mb)]) {
              tokens += x;
              lens += (lens.empty() ? "" : ";") + std::to_string(x);
            }
          }
          table.tokens.push_back(tokens);
          seq_lens.values.push_back(std::move(lens));
        }
      }
    }
    origin_ns += span_ns + 1'000'000;
  }
  table.extra.push_back(std::move(seq_lens));
  return table;
}

trace::JobMeta MetaOf(const SimulatedJob& job) {
  const JobSection& j = job.spec.job;
  trace::JobMeta meta;
  meta.dp = job.dp_replicas;
  meta.pp = j.pp;
  meta.tp = j.tp;
  meta.cp = j.cp;
  meta.vpp = j.vpp;
  meta.world_size = int64_t{job.dp_replicas} * j.pp * j.tp * j.cp;
  meta.trial_name = job.spec.name;
  meta.raw = {{"trial_name", job.spec.name},
              {"dp_size", std::to_string(meta.dp)},
              {"pp_size", std::to_string(j.pp)},
              {"tp_size", std::to_string(j.tp)},
              {"dsp_size", std::to_string(j.cp)},
              {"vpp_size", std::to_string(j.vpp)},
              {"world_size", std::to_string(meta.world_size)},
              {"gpus_per_node", std::to_string(j.gpus_per_node)},
              {"gpu_hour_usd", std::to_string(j.gpu_hour_usd)},
              {"seed", std::to_string(j.seed)}};
  // The layer split, for the planner's stage repartition.
  const ModelSection& model = job.spec.model;
  if (!model.layers_per_stage.empty()) {
    std::string list;
    for (int32_t n : model.layers_per_stage) {
      list += (list.empty() ? "" : ",") + std::to_string(n);
    }
    meta.raw.emplace_back("layers_per_stage", list);
  } else if (model.layers > 0) {
    meta.raw.emplace_back("num_layers", std::to_string(model.layers));
  }
  return meta;
}

}  // namespace strag::sim
