// SPDX-License-Identifier: Apache-2.0
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
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
        m_(spec_.job.microbatches) {
    StageFactors();
  }

  // The job's steps, lanes and sequences are those of a new window (a run
  // of consecutive steps; the whole job in one window when not streamed):
  // the tables cached across Fill()s are rebuilt. Draws are keyed by the
  // global step (job.steps), never by the position in the window, so a
  // window draws what the whole job would.
  void NewWindow() {
    lanes_ = job_.num_lanes();
    seq_factor_.clear();
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
    const int64_t step = job_.steps[k];
    if (st.steps && (step < st.steps->first || step > st.steps->second))
      return false;
    if (st.probability >= 1.0) return true;
    return Uniform({spec_.job.seed, kActive, i, Step(k)}) < st.probability;
  }

  // The global step of window step index k, as a draw key.
  uint64_t Step(size_t k) const {
    return static_cast<uint64_t>(job_.steps[k]);
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
            ApplyNoise(spec_.compute.noise, x,
                       {seed, kComputeNoise, v, Step(k), d});
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
      row[l] =
          ApplyNoise(spec_.comm.noise, x, {seed, kCommNoise, v, Step(k), d});
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
      const int64_t step = job_.steps[k];
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
                         static_cast<uint64_t>(rank), Step(k)}) <
                st.rate_per_step;
          }
          if (!paused) continue;
          where = static_cast<int32_t>(
              Uniform({spec_.job.seed, kGcWhere, i, Step(k),
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
      const int64_t step = job_.steps[k];
      if (st.steps && (step < st.steps->first || step > st.steps->second))
        continue;
      bool any = false;
      for (auto [d, s] : workers) {
        const auto worker = static_cast<uint64_t>(layout_.Rank(d, s, 0, 0));
        if (st.probability < 1.0 &&
            Uniform({spec_.job.seed, kActive, i, Step(k), worker + 1}) >=
                st.probability) {
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
  size_t lanes_ = 0;  // of the window
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

// The sequence lengths of microbatch `idx` of the job, idx = lane *
// microbatches + microbatch over the whole job's lanes (step * DP' + dp).
void DrawMicrobatch(const JobSpec& spec, size_t idx, double reference,
                    std::vector<int64_t>* lengths) {
  const SequenceSection& seq = spec.sequences;
  const auto n = static_cast<size_t>(std::max(1, seq.per_microbatch));
  lengths->clear();
  for (size_t j = 0; j < n; ++j) {
    switch (seq.kind) {
      case SequenceSection::Kind::kFixed:
        lengths->push_back(seq.length);
        break;
      case SequenceSection::Kind::kLognormal: {
        const double z = StandardNormal({spec.job.seed, kSequence, idx, j});
        // Clamped before rounding: a draw beyond int64 (a huge median or
        // sigma) has no llround.
        const double x = seq.median * std::exp(seq.sigma * z);
        lengths->push_back(
            x >= static_cast<double>(seq.max)
                ? seq.max
                : std::clamp<int64_t>(std::llround(x), 1, seq.max));
        break;
      }
      case SequenceSection::Kind::kFile:
        lengths->push_back(
            seq.lengths.empty()
                ? static_cast<int64_t>(reference)
                : seq.lengths[(idx * n + j) % seq.lengths.size()]);
        break;
    }
  }
}

// The sequences of the window's lanes.
void DrawSequences(SimulatedJob* job, double reference) {
  const auto m = static_cast<size_t>(job->spec.job.microbatches);
  const size_t count = job->num_lanes() * m;
  const size_t first = static_cast<size_t>(job->steps.front()) *
                       static_cast<size_t>(job->dp_replicas) * m;
  job->sequences.resize(count);
  for (size_t idx = 0; idx < count; ++idx) {
    DrawMicrobatch(job->spec, first + idx, reference, &job->sequences[idx]);
  }
}

// The cap of sequences.balance: the largest drawn microbatch of the whole
// job, in tokens. It couples the steps, so a streamed job draws every
// step's sequences once more up front to find it (no lengths kept).
double MicrobatchTokenCap(const SimulatedJob& job, double reference) {
  const size_t count = static_cast<size_t>(job.spec.job.steps) *
                       static_cast<size_t>(job.dp_replicas) *
                       static_cast<size_t>(job.spec.job.microbatches);
  double cap = 0;
  std::vector<int64_t> lengths;
  for (size_t idx = 0; idx < count; ++idx) {
    DrawMicrobatch(job.spec, idx, reference, &lengths);
    double tokens = 0;
    for (int64_t x : lengths) tokens += static_cast<double>(x);
    cap = std::max(cap, tokens);
  }
  return cap;
}

// The planner's sequence balancing applied to the drawn sequences, step by
// step, with the spec's cost (sequences.balance, base/partition.h), under
// `cap` tokens per microbatch (MicrobatchTokenCap).
void BalanceSequences(SimulatedJob* job, double cap) {
  const SequenceSection& seq = job->spec.sequences;
  if (seq.balance == SequenceSection::Balance::kNone) return;
  const auto m = static_cast<size_t>(job->spec.job.microbatches);
  const auto dp = static_cast<size_t>(job->dp_replicas);
  std::vector<std::vector<int32_t>> step(dp * m);
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

// An op whose drawn duration or host delays exceed the limit of one op.
struct BadOp {
  size_t v = 0;  // node
  int64_t step = 0;
  size_t dp = 0;
  double cost = 0;
  float delay = 0;
};

// Every drawn duration and host delay within the limit of one op
// (kMaxOpSeconds): the spec's durations are validated one by one, but their
// products with stage, sequence and straggler factors and heavy-tailed noise
// draws are only known here. NaN fails too. Returns the window's first op
// beyond it in node-major order (then by lane), the order the whole job is
// checked in.
std::optional<BadOp> FirstBadOp(const SimulatedJob& job) {
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
      if (cost[l] <= kMaxOpSeconds && delay[l] <= kMaxOpSeconds) continue;
      return BadOp{v, job.steps[l / dp], l % dp, cost[l], delay[l]};
    }
  }
  return std::nullopt;
}

Status BadOpError(const SimulatedJob& job, const BadOp& bad) {
  const bool slow = !(bad.cost <= kMaxOpSeconds);
  const graph::OpKey& key = job.schedule.model.keys[bad.v];
  const std::string where = "step " + std::to_string(bad.step) + ", dp " +
                            std::to_string(bad.dp) + ", stage " +
                            std::to_string(key.stage) + ": ";
  const std::string what =
      slow ? "a drawn " + std::string(trace::OpTypeName(key.type)) + " of " +
                 Seconds(bad.cost) +
                 " s (the spec's duration times the stage, sequence and "
                 "straggler factors and the noise draw) exceeds"
           : "host delays (gc_pause, dataloader_stall) of " +
                 Seconds(bad.delay) + " s before one forward exceed";
  return InvalidInput(SourceOf(job.spec) + ": " + where + what +
                      " the limit of 1e6 s for one op; lower them or the "
                      "noise");
}

// The whole trace within kMaxTraceSeconds (steps laid end to end 1 ms
// apart, as ToOpsTable writes them), so that every time of it is an int64
// nanosecond count with headroom. `total` sums span + 1 ms step by step.
bool TraceFits(double total) { return total <= kMaxTraceSeconds; }

Status TraceLengthError(const JobSpec& spec, double total) {
  return InvalidInput(
      SourceOf(spec) + ": the simulated trace would last " + Seconds(total) +
      " s (" + std::to_string(spec.job.steps) +
      " steps), beyond the limit of 1e9 s of a trace; simulate fewer "
      "steps or shorter durations");
}

// Replays the window with its injections: step times, and every start and
// end (keep_times) or the binary32 starts.
void ReplayWindow(SimulatedJob* job, bool keep_times) {
  if (keep_times) {
    job->step_times = Run(*job, job->cost, job->launch_delay, &job->times);
    return;
  }
  const size_t n = job->num_nodes(), lanes = job->num_lanes();
  job->start32.resize(n * lanes);
  job->step_times = Run(*job, job->cost, job->launch_delay, nullptr,
                        [&](const replay::WindowTimes& w) {
                          for (size_t v = 0; v < n; ++v) {
                            for (size_t l = 0; l < w.lanes; ++l) {
                              job->start32[v * lanes + w.lo + l] =
                                  static_cast<float>(w.start[v * w.stride + l]);
                            }
                          }
                        });
}

template <typename T>
void Extend(std::vector<T>* to, const std::vector<T>& from) {
  to->insert(to->end(), from.begin(), from.end());
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
  SimulateOptions whole = options;
  whole.window_steps = 0;
  return SimulateInWindows(spec, whole, nullptr);
}

namespace {

// Per-step results of a job simulated window by window, reduced at the end
// exactly as one window of every step would be (the same values in the
// same order).
struct StepResults {
  replay::StepTimes times;                // with every injection
  std::vector<double> blocking_opt;       // without launch delays
  std::vector<std::vector<double>> without, without_blocking;  // per skip
  std::vector<std::vector<int64_t>> affected;  // per injection
  std::optional<BadOp> bad;                    // the first, node-major
  double total = 0;                            // trace length so far, s
};

// The truth replays of one window: the job without launch delays, and
// without each injection (with and without launch delays).
void TruthReplays(const SimulatedJob& job, JobFiller* filler,
                  StepResults* out) {
  if (job.spec.stragglers.empty()) return;  // nothing uses the means
  const BigVector<float> no_delay;
  Extend(&out->blocking_opt, Run(job, job.cost, no_delay, nullptr).opt);
  BigVector<double> cost;
  BigVector<float> delay;
  for (size_t i = 0; i < job.spec.stragglers.size(); ++i) {
    filler->Fill(static_cast<int64_t>(i), &cost, &delay, nullptr);
    Extend(&out->without[i], Run(job, cost, delay, nullptr).opt);
    Extend(&out->without_blocking[i], Run(job, cost, no_delay, nullptr).opt);
  }
}

void RecordTruth(const StepResults& r, bool truth, SimulatedJob* job) {
  const double with = PairwiseMean(r.times.opt);
  const double with_blocking = truth ? PairwiseMean(r.blocking_opt) : 0.0;
  for (size_t i = 0; i < job->spec.stragglers.size(); ++i) {
    TruthRecord t;
    DescribeTruth(*job, i, &t);
    t.steps = r.affected[i];
    if (truth) {
      const double without = PairwiseMean(r.without[i]);
      t.slowdown = with / without;
      t.excess_step_ms = (with - without) / kMs;
      const double without_blocking = PairwiseMean(r.without_blocking[i]);
      t.blocking_slowdown = with_blocking / without_blocking;
      t.blocking_excess_step_ms = (with_blocking - without_blocking) / kMs;
    }
    job->truth.push_back(std::move(t));
  }
}

}  // namespace

Result<SimulatedJob> SimulateInWindows(const JobSpec& spec,
                                       const SimulateOptions& options,
                                       const WindowVisitor& visit) {
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
  ASSIGN_OR_RETURN(
      job.schedule,
      BuildScheduleModel(spec.job.pp, spec.job.vpp, spec.job.microbatches,
                         int64_t{job.dp_replicas} * spec.job.cp > 1));
  JobFiller filler(job);
  const double reference = filler.ReferenceLength();
  const double cap =
      spec.sequences.balance == SequenceSection::Balance::kNone
          ? 0.0
          : MicrobatchTokenCap(job, reference);
  const int64_t steps = spec.job.steps;
  const int64_t window =
      options.window_steps > 0 ? std::min(options.window_steps, steps) : steps;
  const size_t injections = spec.stragglers.size();
  StepResults r;
  r.without.resize(injections);
  r.without_blocking.resize(injections);
  r.affected.resize(injections);
  std::vector<std::vector<int64_t>> affected;
  for (int64_t first = 0; first < steps; first += window) {
    job.steps.resize(static_cast<size_t>(std::min(window, steps - first)));
    std::iota(job.steps.begin(), job.steps.end(), first);
    DrawSequences(&job, reference);
    BalanceSequences(&job, cap);
    filler.NewWindow();
    job.host_delays.clear();
    filler.Fill(-1, &job.cost, &job.launch_delay, &affected, &job.host_delays);
    for (size_t i = 0; i < injections; ++i) Extend(&r.affected[i], affected[i]);
    // After an error the rest is still simulated, without visits, to report
    // the error the whole job reports: the first bad op of every step, else
    // the length of the whole trace.
    const std::optional<BadOp> bad = FirstBadOp(job);
    if (bad && (!r.bad || bad->v < r.bad->v)) r.bad = bad;
    if (r.bad) continue;
    ReplayWindow(&job, options.keep_times);
    Extend(&r.times.span, job.step_times.span);
    Extend(&r.times.opt, job.step_times.opt);
    for (double span : job.step_times.span) r.total += span + kMs;
    if (!TraceFits(r.total)) continue;
    if (options.truth) TruthReplays(job, &filler, &r);
    if (visit) RETURN_IF_ERROR(visit(job));
  }
  if (r.bad) return BadOpError(job, *r.bad);
  if (!TraceFits(r.total)) return TraceLengthError(spec, r.total);
  if (window < steps) {
    // Only the whole job's results remain: no window's per-op arrays.
    SimulatedJob whole;
    whole.spec = std::move(job.spec);
    whole.schedule = std::move(job.schedule);
    whole.dp_replicas = job.dp_replicas;
    job = std::move(whole);
    job.steps.resize(static_cast<size_t>(steps));
    std::iota(job.steps.begin(), job.steps.end(), int64_t{0});
  }
  RecordTruth(r, options.truth, &job);
  job.step_times = std::move(r.times);
  return job;
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
