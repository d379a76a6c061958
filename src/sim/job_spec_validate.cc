// SPDX-License-Identifier: Apache-2.0
// ValidateJobSpec: the ranges and cross-field rules of a JobSpec
// (docs/formats/sim-spec.md). Messages use JobSpec::locations to name the
// line and the value as written; specs built in code get the path alone.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/job_spec.h"

namespace strag::sim {
namespace {

std::string Fmt(double v) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

std::string Fmt(int64_t v) { return std::to_string(v); }
std::string Fmt(int32_t v) { return std::to_string(v); }

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

template <typename T>
std::string FmtList(const std::vector<T>& values) {
  std::string out = "[";
  for (const T& v : values) out += (out.size() > 1 ? ", " : "") + Fmt(v);
  return out + "]";
}

class Validator {
 public:
  explicit Validator(const JobSpec& spec)
      : spec_(spec), source_(spec.name.empty() ? "job spec" : spec.name) {}

  Status Check();

 private:
  // "SOURCE: line N: PATH: VALUE what"; VALUE as written when the spec
  // records it, else `value`. The line is that of the nearest recorded
  // path (the key itself, else its section).
  Status Bad(const std::string& path, const std::string& value,
             const std::string& what) const;
  Status AtLeast(const std::string& path, double v, double min) const {
    if (v >= min) return Status::Ok();
    return Bad(path, Fmt(v), "must be at least " + Fmt(min));
  }
  Status AtLeast(const std::string& path, int64_t v, int64_t min) const {
    if (v >= min) return Status::Ok();
    return Bad(path, Fmt(v),
               min == 0 ? "is negative" : "must be at least " + Fmt(min));
  }
  // A number in [0, max] (NaN, from a spec built in code, is neither).
  Status InRange(const std::string& path, double v, double max,
                 const std::string& limit) const {
    if (!(v >= 0)) return Bad(path, Fmt(v), "is negative");
    if (v <= max) return Status::Ok();
    return Bad(path, Fmt(v), "must be at most " + limit);
  }
  // A time in ms: one op may last at most kMaxOpSeconds.
  Status Time(const std::string& path, double v) const {
    return InRange(path, v, kMaxDurationMs,
                   "1e9 ms (1e6 s, the limit of one op)");
  }
  Status Coefficient(const std::string& path, double v) const {
    return InRange(path, v, kMaxCoefficient, "1e6");
  }
  Status Length(const std::string& path, int64_t v) const {
    RETURN_IF_ERROR(AtLeast(path, v, int64_t{1}));
    if (v <= kMaxSequenceLength) return Status::Ok();
    return Bad(path, Fmt(v), "must be at most 2147483647 tokens (2^31 - 1)");
  }
  Status Probability(const std::string& path, double v) const {
    if (v >= 0 && v <= 1) return Status::Ok();
    return Bad(path, Fmt(v), "is outside [0, 1]");
  }
  Status Rank(const std::string& path, int64_t rank) const;

  Status CheckJob();
  Status CheckModel();
  Status CheckNoise(const std::string& path, const NoiseSpec& noise) const;
  Status CheckSequences() const;
  Status CheckStraggler(size_t i) const;

  const JobSpec& spec_;
  std::string source_;
  int64_t world_ = 0;
  int64_t nodes_ = 0;
};

Status Validator::Bad(const std::string& path, const std::string& value,
                      const std::string& what) const {
  std::string where = source_ + ": ";
  std::string shown = value;
  for (std::string p = path; !p.empty();) {
    const auto it = spec_.locations.find(p);
    if (it != spec_.locations.end() && it->second.line > 0) {
      where += "line " + std::to_string(it->second.line) + ": ";
      if (p == path && !it->second.text.empty()) shown = it->second.text;
      break;
    }
    const size_t cut = p.find_last_of(".[");
    p.resize(cut == std::string::npos ? 0 : cut);
  }
  return InvalidInput(where + path + ": " + shown + " " + what);
}

Status Validator::Rank(const std::string& path, int64_t rank) const {
  RETURN_IF_ERROR(AtLeast(path, rank, int64_t{0}));
  if (rank < world_) return Status::Ok();
  const JobSection& j = spec_.job;
  return Bad(
      path, Fmt(rank),
      "is outside the world of " + Fmt(world_) + " ranks (dp " + Fmt(j.dp) +
          (j.backup_workers > 0 ? " + " + Fmt(j.backup_workers) + " backup"
                                : "") +
          " x pp " + Fmt(j.pp) + " x tp " + Fmt(j.tp) + " x cp " + Fmt(j.cp) +
          ")");
}

Status Validator::Check() {
  RETURN_IF_ERROR(CheckJob());
  RETURN_IF_ERROR(CheckModel());
  const ComputeSection& c = spec_.compute;
  RETURN_IF_ERROR(Time("compute.forward_ms", c.forward_ms));
  RETURN_IF_ERROR(Time("compute.backward_ms", c.backward_ms));
  RETURN_IF_ERROR(Time("compute.optimizer_ms", c.optimizer_ms));
  RETURN_IF_ERROR(CheckNoise("compute.noise", c.noise));
  RETURN_IF_ERROR(CheckSequences());
  const CommSection& m = spec_.comm;
  RETURN_IF_ERROR(Time("comm.p2p_ms", m.p2p_ms));
  RETURN_IF_ERROR(Time("comm.dp_allgather_ms", m.dp_allgather_ms));
  RETURN_IF_ERROR(Time("comm.dp_reducescatter_ms", m.dp_reducescatter_ms));
  RETURN_IF_ERROR(Time("comm.layernorm_ms", m.layernorm_ms));
  RETURN_IF_ERROR(Time("comm.embedding_ms", m.embedding_ms));
  RETURN_IF_ERROR(Time("comm.clip_ms", m.clip_ms));
  RETURN_IF_ERROR(CheckNoise("comm.noise", m.noise));
  for (size_t i = 0; i < spec_.stragglers.size(); ++i) {
    RETURN_IF_ERROR(CheckStraggler(i));
  }
  return Status::Ok();
}

Status Validator::CheckJob() {
  const JobSection& j = spec_.job;
  for (const auto& [key, v] : {std::pair{"dp", j.dp},
                               {"pp", j.pp},
                               {"tp", j.tp},
                               {"cp", j.cp},
                               {"vpp", j.vpp},
                               {"microbatches", j.microbatches},
                               {"steps", j.steps},
                               {"gpus_per_node", j.gpus_per_node}}) {
    RETURN_IF_ERROR(AtLeast(std::string("job.") + key, int64_t{v}, 1));
  }
  RETURN_IF_ERROR(
      AtLeast("job.backup_workers", int64_t{j.backup_workers}, int64_t{0}));
  RETURN_IF_ERROR(
      InRange("job.gpu_hour_usd", j.gpu_hour_usd, kMaxGpuHourUsd, "1e6"));
  // Global ranks are int32 in traces; check before each product so that
  // the product itself cannot overflow.
  constexpr int64_t kMaxWorld = std::numeric_limits<int32_t>::max();
  world_ = int64_t{j.dp} + j.backup_workers;
  for (const int64_t factor : {int64_t{j.pp}, int64_t{j.tp}, int64_t{j.cp}}) {
    if (world_ > kMaxWorld / factor) {
      return Bad("job", "(dp + backup_workers) x pp x tp x cp",
                 "exceeds 2^31 - 1 ranks");
    }
    world_ *= factor;
  }
  nodes_ = (world_ + j.gpus_per_node - 1) / j.gpus_per_node;
  // Forwards of a stage per step are numbered with int32.
  if (int64_t{j.microbatches} * j.vpp > kMaxWorld) {
    return Bad("job.microbatches", Fmt(j.microbatches),
               "x vpp " + Fmt(j.vpp) +
                   " exceeds 2^31 - 1 forwards per stage and step");
  }
  if (j.vpp > 1 && j.microbatches % j.pp != 0) {
    return Bad("job.vpp", Fmt(j.vpp),
               "(interleaved 1F1B) needs microbatches divisible by pp: " +
                   Fmt(j.microbatches) + " is not a multiple of " + Fmt(j.pp));
  }
  const std::vector<int32_t>& per = j.microbatches_per_replica;
  if (!per.empty() && per.size() != static_cast<size_t>(j.dp)) {
    return Bad("job.microbatches_per_replica", FmtList(per),
               "needs one count per DP replica (dp " + Fmt(j.dp) + ")");
  }
  for (size_t i = 0; i < per.size(); ++i) {
    if (per[i] < 1 || per[i] > j.microbatches) {
      return Bad(Index("job.microbatches_per_replica", i), Fmt(per[i]),
                 "must be between 1 and microbatches (" +
                     Fmt(j.microbatches) + ")");
    }
  }
  if (j.drop_slowest < 0 ||
      int64_t{j.drop_slowest} >= int64_t{j.dp} * j.microbatches) {
    return Bad("job.drop_slowest", Fmt(j.drop_slowest),
               "must be between 0 and dp x microbatches - 1 (" +
                   Fmt(int64_t{j.dp} * j.microbatches - 1) + ")");
  }
  if (!per.empty() && (j.backup_workers > 0 || j.vpp > 1)) {
    return Bad("job.microbatches_per_replica", FmtList(per),
               "cannot be combined with backup_workers or vpp > 1");
  }
  if (j.backup_workers > 0 && j.pp != 1) {
    return Bad("job.backup_workers", Fmt(j.backup_workers),
               "needs pp 1 (a backup replaces a whole DP replica), found pp " +
                   Fmt(j.pp));
  }
  return Status::Ok();
}

Status Validator::CheckModel() {
  const ModelSection& m = spec_.model;
  const int32_t pp = spec_.job.pp;
  RETURN_IF_ERROR(AtLeast("model.layers", int64_t{m.layers}, int64_t{0}));
  RETURN_IF_ERROR(Coefficient("model.loss_layer_cost", m.loss_layer_cost));
  const std::vector<int32_t>& list = m.layers_per_stage;
  if (list.empty()) {
    if (m.layers % pp == 0) return Status::Ok();
    return Bad("model.layers", Fmt(m.layers),
               "does not split evenly over pp " + Fmt(pp) +
                   " stages (give a list of layers per stage)");
  }
  if (list.size() != static_cast<size_t>(pp)) {
    return Bad("model.layers", FmtList(list),
               "lists " + std::to_string(list.size()) + " stages, but pp is " +
                   Fmt(pp));
  }
  int64_t sum = 0;
  for (size_t s = 0; s < list.size(); ++s) {
    RETURN_IF_ERROR(
        AtLeast(Index("model.layers", s), int64_t{list[s]}, int64_t{0}));
    sum += list[s];
  }
  if (sum == 0) return Bad("model.layers", FmtList(list), "has no layers");
  if (sum != m.layers) {
    return Bad("model.layers", FmtList(list),
               "sums to " + Fmt(sum) + ", but layers is " + Fmt(m.layers));
  }
  return Status::Ok();
}

Status Validator::CheckNoise(const std::string& path,
                             const NoiseSpec& noise) const {
  // Any sigma is accepted: its draws are checked by the simulator.
  RETURN_IF_ERROR(InRange(path + ".sigma", noise.sigma,
                          std::numeric_limits<double>::infinity(), ""));
  return Time(path + ".sd_ms", noise.sd_ms);
}

Status Validator::CheckSequences() const {
  const SequenceSection& s = spec_.sequences;
  const std::string p = "sequences.";
  RETURN_IF_ERROR(Length(p + "length", s.length));
  RETURN_IF_ERROR(
      AtLeast(p + "per_microbatch", int64_t{s.per_microbatch}, int64_t{1}));
  RETURN_IF_ERROR(Coefficient(p + "linear", s.linear));
  RETURN_IF_ERROR(Coefficient(p + "quadratic", s.quadratic));
  if (s.linear == 0 && s.quadratic == 0) {
    return Bad(p + "linear", "0",
               "and quadratic 0: a microbatch costs nothing");
  }
  if (s.kind == SequenceSection::Kind::kLognormal) {
    if (!(s.median > 0))
      return Bad(p + "median", Fmt(s.median), "is not positive");
    RETURN_IF_ERROR(InRange(p + "sigma", s.sigma,
                            std::numeric_limits<double>::infinity(), ""));
    RETURN_IF_ERROR(Length(p + "max", s.max));
    if (static_cast<double>(s.max) < s.median) {
      return Bad(p + "max", Fmt(s.max), "is below the median " + Fmt(s.median));
    }
  }
  if (s.kind == SequenceSection::Kind::kFile && s.path.empty()) {
    return Bad(p + "path", "\"\"", "is empty");
  }
  for (size_t i = 0; i < s.lengths.size(); ++i) {
    RETURN_IF_ERROR(Length(Index(p + "lengths", i), s.lengths[i]));
  }
  return Status::Ok();
}

Status Validator::CheckStraggler(size_t i) const {
  using Kind = StragglerSpec::Kind;
  const StragglerSpec& s = spec_.stragglers[i];
  const std::string p = Index("stragglers", i) + ".";
  RETURN_IF_ERROR(Probability(p + "probability", s.probability));
  if (s.steps) {
    const auto [from, to] = *s.steps;
    const std::string shown = "[" + Fmt(from) + ", " + Fmt(to) + "]";
    if (from < 0) return Bad(p + "steps", shown, "starts before step 0");
    if (to < from) return Bad(p + "steps", shown, "ends before it starts");
    if (from >= spec_.job.steps) {
      return Bad(p + "steps", shown,
                 "starts after the last step (steps are 0.." +
                     Fmt(int64_t{spec_.job.steps} - 1) + ")");
    }
  }
  if (s.kind == Kind::kSlowWorker || s.kind == Kind::kSlowLink) {
    RETURN_IF_ERROR(AtLeast(p + "factor", s.factor, 1.0));
    if (!(s.factor <= kMaxFactor)) {
      return Bad(p + "factor", Fmt(s.factor), "must be at most 1e6");
    }
  }
  if (s.kind == Kind::kSlowWorker) return Rank(p + "rank", s.rank);
  if (s.kind == Kind::kSlowLink) {
    RETURN_IF_ERROR(AtLeast(p + "node", int64_t{s.node}, int64_t{0}));
    if (s.node < nodes_) return Status::Ok();
    return Bad(p + "node", Fmt(s.node),
               "is outside the " + Fmt(nodes_) + " nodes (" + Fmt(world_) +
                   " ranks, " + Fmt(spec_.job.gpus_per_node) + " per node)");
  }
  // gc_pause, dataloader_stall: rank, ranks or all.
  if (s.rank < 0 && !s.all_ranks && s.ranks.empty()) {
    return Bad(p + "ranks", "[]",
               "selects no rank (give rank, ranks: [...] or ranks: all)");
  }
  if (s.rank >= 0) RETURN_IF_ERROR(Rank(p + "rank", s.rank));
  for (size_t k = 0; k < s.ranks.size(); ++k) {
    const std::string path = Index(p + "ranks", k);
    RETURN_IF_ERROR(Rank(path, s.ranks[k]));
    if (std::find(s.ranks.begin(), s.ranks.begin() + static_cast<ptrdiff_t>(k),
                  s.ranks[k]) != s.ranks.begin() + static_cast<ptrdiff_t>(k)) {
      return Bad(path, Fmt(s.ranks[k]), "is listed twice");
    }
  }
  if (s.kind == Kind::kDataloaderStall) return Time(p + "stall_ms", s.stall_ms);
  RETURN_IF_ERROR(Probability(p + "rate_per_step", s.rate_per_step));
  RETURN_IF_ERROR(Time(p + "pause_ms", s.pause_ms));
  RETURN_IF_ERROR(
      AtLeast(p + "planned.every", int64_t{s.planned_every}, int64_t{0}));
  if (s.planned_every > 0 && s.rate_per_step > 0) {
    return Bad(p + "planned.every", Fmt(s.planned_every),
               "cannot be combined with rate_per_step");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateJobSpec(const JobSpec& spec) { return Validator(spec).Check(); }

}  // namespace strag::sim
