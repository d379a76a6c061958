// SPDX-License-Identifier: Apache-2.0
// Job spec: the YAML tree is read into a JobSpec (types, structure, unknown
// and missing keys), then validated (ranges and cross-field rules). Both
// passes name the source, the line and the key path.

#include "sim/job_spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/spec_yaml.h"

namespace strag::sim {
namespace {

using Keys = std::span<const std::string_view>;
using YKind = YamlNode::Kind;

// Key path -> where it was written (JobSpec::locations).
using WrittenMap = std::map<std::string, SpecLocation, std::less<>>;

std::string Join(Keys keys) {
  std::string out;
  for (const std::string_view key : keys) {
    if (!out.empty()) out += ", ";
    out += key;
  }
  return out;
}

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// The node in flow style, for messages: `[5, 2]`, `{every: 0}`.
std::string Show(const YamlNode& node) {
  if (node.kind == YKind::kScalar) {
    return node.quoted ? "\"" + node.text + "\"" : node.text;
  }
  const bool is_map = node.kind == YKind::kMap;
  std::string out = is_map ? "{" : "[";
  for (const YamlNode& child : node.children) {
    if (out.size() > 1) out += ", ";
    if (is_map) out += child.key + ": ";
    out += Show(child);
  }
  return out + (is_map ? "}" : "]");
}

// What a node is, for "expected X, found Y": a scalar shows itself.
std::string Found(const YamlNode& node) {
  if (node.kind != YKind::kScalar || node.IsNull()) {
    return std::string(node.KindName());
  }
  return Show(node);
}

// One choice of a discriminating key (`kind`, `dist`) and the keys that
// choice allows and requires.
template <typename E>
struct Variant {
  std::string_view name;
  E value;
  Keys allowed;
  Keys required;
};

constexpr std::string_view kRootKeys[] = {"job",       "model", "compute",
                                          "sequences", "comm",  "stragglers"};
// clang-format off
constexpr std::string_view kJobKeys[] = {
    "dp", "pp", "tp", "cp", "vpp", "microbatches", "steps", "seed",
    "gpus_per_node", "gpu_hour_usd", "backup_workers",
    "microbatches_per_replica", "drop_slowest"};
// clang-format on
constexpr std::string_view kModelKeys[] = {"layers", "loss_layer_cost"};
constexpr std::string_view kComputeKeys[] = {"forward_ms", "backward_ms",
                                             "optimizer_ms", "noise"};
constexpr std::string_view kCommKeys[] = {
    "p2p_ms",       "dp_allgather_ms", "dp_reducescatter_ms",
    "layernorm_ms", "embedding_ms",    "clip_ms",
    "noise"};
constexpr std::string_view kEveryKeys[] = {"every"};

constexpr std::string_view kNoiseNone[] = {"dist"};
constexpr std::string_view kNoiseLognormal[] = {"dist", "sigma"};
constexpr std::string_view kNoiseNormal[] = {"dist", "sd_ms"};
constexpr std::string_view kSigma[] = {"sigma"};
constexpr std::string_view kSdMs[] = {"sd_ms"};
using NK = NoiseSpec::Kind;
constexpr Variant<NK> kNoiseDists[] = {
    {"none", NK::kNone, kNoiseNone, {}},
    {"lognormal", NK::kLognormal, kNoiseLognormal, kSigma},
    {"normal", NK::kNormal, kNoiseNormal, kSdMs},
    {"exponential", NK::kExponential, kNoiseNone, {}},
};

constexpr std::string_view kSeqFixed[] = {
    "dist", "length", "per_microbatch", "linear", "quadratic", "balance"};
constexpr std::string_view kSeqLognormal[] = {
    "dist",   "median",    "sigma",  "max", "per_microbatch",
    "linear", "quadratic", "balance"};
constexpr std::string_view kSeqFile[] = {
    "dist", "path", "per_microbatch", "linear", "quadratic", "balance"};
constexpr std::string_view kMedianSigma[] = {"median", "sigma"};
constexpr std::string_view kPath[] = {"path"};
using SK = SequenceSection::Kind;
constexpr Variant<SK> kSeqDists[] = {
    {"fixed", SK::kFixed, kSeqFixed, {}},
    {"lognormal", SK::kLognormal, kSeqLognormal, kMedianSigma},
    {"file", SK::kFile, kSeqFile, kPath},
};

constexpr std::string_view kSlowWorker[] = {"kind",  "rank",        "factor",
                                            "steps", "probability", "op"};
constexpr std::string_view kGcPause[] = {
    "kind", "rank", "ranks", "rate_per_step", "pause_ms", "planned", "steps"};
constexpr std::string_view kSlowLink[] = {"kind", "node", "factor", "steps",
                                          "probability"};
constexpr std::string_view kStall[] = {"kind",     "rank",        "ranks",
                                       "stall_ms", "probability", "steps"};
constexpr std::string_view kRankFactor[] = {"rank", "factor"};
constexpr std::string_view kPauseMs[] = {"pause_ms"};
constexpr std::string_view kNodeFactor[] = {"node", "factor"};
constexpr std::string_view kStallMs[] = {"stall_ms"};
using StK = StragglerSpec::Kind;
constexpr Variant<StK> kStragglerKinds[] = {
    {"slow_worker", StK::kSlowWorker, kSlowWorker, kRankFactor},
    {"gc_pause", StK::kGcPause, kGcPause, kPauseMs},
    {"slow_link", StK::kSlowLink, kSlowLink, kNodeFactor},
    {"dataloader_stall", StK::kDataloaderStall, kStall, kStallMs},
};

template <typename E>
std::string VariantNames(std::span<const Variant<E>> variants) {
  std::string out;
  for (const Variant<E>& v : variants) {
    out += (out.empty() ? "" : ", ") + std::string(v.name);
  }
  return out;
}

// Reads the YAML tree into a JobSpec: types and structure only; ranges are
// the Validator's.
class SpecReader {
 public:
  SpecReader(std::string_view source, WrittenMap* written)
      : source_(source), written_(written) {}

  Status Read(const YamlNode& root, JobSpec* spec);

 private:
  Status Error(int32_t line, const std::string& path,
               const std::string& what) const {
    return InvalidInput(std::string(source_) + ": line " +
                        std::to_string(line) + ": " + path + ": " + what);
  }
  // A map (an empty value counts as an empty map) with only `allowed` keys.
  Status CheckMap(const YamlNode& node, const std::string& path, Keys allowed,
                  const std::string& context = "");
  // The entry `key` of `map` or nullptr; records where it was written.
  const YamlNode* Get(const YamlNode& map, const std::string& path,
                      std::string_view key);
  template <typename T>
  Status Read(const YamlNode& map, const std::string& path,
              std::string_view key, T* out);
  template <typename T>
  Result<T> Convert(const YamlNode& node, const std::string& path) const;
  template <typename E>
  Result<const Variant<E>*> ReadVariant(const YamlNode& node,
                                        const std::string& path,
                                        std::string_view key,
                                        std::span<const Variant<E>> variants,
                                        const Variant<E>* fallback);

  Status ReadJob(const YamlNode& node, JobSection* job);
  Status ReadModel(const YamlNode& node, ModelSection* model);
  Status ReadNoise(const YamlNode& map, const std::string& path,
                   NoiseSpec* noise);
  Status ReadSequences(const YamlNode& node, SequenceSection* seq);
  Status ReadStraggler(const YamlNode& node, const std::string& path,
                       StragglerSpec* s);
  Status ReadTargets(const YamlNode& node, const std::string& path,
                     StragglerSpec* s);
  Status ReadSteps(const YamlNode& node, const std::string& path,
                   StragglerSpec* s);

  std::string_view source_;
  WrittenMap* written_;
};

Status SpecReader::CheckMap(const YamlNode& node, const std::string& path,
                            Keys allowed, const std::string& context) {
  const std::string shown = path.empty() ? "the spec" : path;
  if (node.IsNull()) return Status::Ok();
  if (node.kind != YKind::kMap) {
    return Error(node.line, shown, "expected a map, found " + Found(node));
  }
  (*written_)[path] = {node.key_line > 0 ? node.key_line : node.line, ""};
  for (const YamlNode& entry : node.children) {
    if (std::ranges::find(allowed, entry.key) == allowed.end()) {
      return Error(
          entry.key_line, Child(path, entry.key),
          "unknown key" + context + " (allowed: " + Join(allowed) + ")");
    }
  }
  return Status::Ok();
}

const YamlNode* SpecReader::Get(const YamlNode& map, const std::string& path,
                                std::string_view key) {
  const YamlNode* node = map.Find(key);
  if (node != nullptr) {
    (*written_)[Child(path, key)] = {
        node->line, node->kind == YKind::kScalar ? node->text : ""};
  }
  return node;
}

// Numbers follow YAML's core schema: decimal, optional sign, no inf/nan;
// a quoted scalar is a string.
template <typename T>
Result<T> SpecReader::Convert(const YamlNode& node,
                              const std::string& path) const {
  using Limits = std::numeric_limits<T>;
  if (node.kind != YKind::kScalar || node.IsNull()) {
    return Error(node.line, path,
                 "expected a number, found " + std::string(node.KindName()));
  }
  std::string_view text = node.text;
  if (text.starts_with('+') && !text.starts_with("+-")) text.remove_prefix(1);
  const char* end = text.data() + text.size();
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const bool whole = !node.quoted && !text.empty() && ptr == end;
  if (whole && ec == std::errc()) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isfinite(value)) return value;
    } else {
      return value;
    }
  }
  if constexpr (std::is_integral_v<T>) {
    const bool negative = text.starts_with('-');
    auto out_of_range = [&]() -> Status {
      if (negative && std::is_unsigned_v<T>) {
        return Error(node.line, path, node.text + " is negative");
      }
      return Error(node.line, path,
                   node.text +
                       (negative ? " is too small (at least " +
                                       std::to_string(Limits::min())
                                 : " is too large (at most " +
                                       std::to_string(Limits::max())) +
                       ")");
    };
    if (whole && ec == std::errc::result_out_of_range) return out_of_range();
    const Result<double> number = node.quoted ? Result<double>(InvalidInput(""))
                                              : Convert<double>(node, path);
    if (number.ok()) {
      // A whole number in another decimal form (1e9, 64.0) is that integer.
      const double x = *number;
      if (std::trunc(x) != x) {
        return Error(node.line, path,
                     node.text + (negative && std::is_unsigned_v<T>
                                      ? " is negative"
                                      : " is not an integer"));
      }
      // Bounds as exact doubles: min() and max() + 1 (a power of two).
      const double lo = static_cast<double>(Limits::min());
      const double hi = std::ldexp(1.0, Limits::digits);
      if (x >= lo && x < hi) return static_cast<T>(x);
      return out_of_range();
    }
  }
  return Error(node.line, path, "\"" + node.text + "\" is not a number");
}

template <typename T>
Status SpecReader::Read(const YamlNode& map, const std::string& path,
                        std::string_view key, T* out) {
  const YamlNode* node = Get(map, path, key);
  if (node == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, Convert<T>(*node, Child(path, key)));
  return Status::Ok();
}

// Reads the discriminating `key` of the map `node` (`fallback` when absent;
// nullptr: required), then checks the keys against the chosen variant.
template <typename E>
Result<const Variant<E>*> SpecReader::ReadVariant(
    const YamlNode& node, const std::string& path, std::string_view key,
    std::span<const Variant<E>> variants, const Variant<E>* fallback) {
  if (node.kind != YKind::kMap) {
    return Error(node.line, path, "expected a map, found " + Found(node));
  }
  const std::string names = VariantNames(variants);
  const YamlNode* value = Get(node, path, key);
  const Variant<E>* chosen = fallback;
  if (value == nullptr && fallback == nullptr) {
    return Error(
        node.line, path,
        "missing key '" + std::string(key) + "' (one of: " + names + ")");
  }
  if (value != nullptr) {
    chosen = nullptr;
    for (const Variant<E>& v : variants) {
      if (value->kind == YKind::kScalar && value->text == v.name) chosen = &v;
    }
    if (chosen == nullptr) {
      return Error(value->line, Child(path, key),
                   (value->kind == YKind::kScalar ? "\"" + value->text + "\""
                                                  : Show(*value)) +
                       " is not one of: " + names);
    }
  }
  const std::string context =
      " for " + std::string(key) + " " + std::string(chosen->name);
  RETURN_IF_ERROR(CheckMap(node, path, chosen->allowed, context));
  for (const std::string_view required : chosen->required) {
    if (node.Find(required) == nullptr) {
      return Error(node.line, path,
                   "missing key '" + std::string(required) + "' (required" +
                       context + ")");
    }
  }
  return chosen;
}

Status SpecReader::Read(const YamlNode& root, JobSpec* spec) {
  RETURN_IF_ERROR(CheckMap(root, "", kRootKeys));
  if (const YamlNode* job = Get(root, "", "job")) {
    RETURN_IF_ERROR(ReadJob(*job, &spec->job));
  }
  if (const YamlNode* model = Get(root, "", "model")) {
    RETURN_IF_ERROR(ReadModel(*model, &spec->model));
  }
  if (const YamlNode* compute = Get(root, "", "compute")) {
    const std::string path = "compute";
    ComputeSection& c = spec->compute;
    RETURN_IF_ERROR(CheckMap(*compute, path, kComputeKeys));
    RETURN_IF_ERROR(Read(*compute, path, "forward_ms", &c.forward_ms));
    RETURN_IF_ERROR(Read(*compute, path, "backward_ms", &c.backward_ms));
    RETURN_IF_ERROR(Read(*compute, path, "optimizer_ms", &c.optimizer_ms));
    RETURN_IF_ERROR(ReadNoise(*compute, path, &c.noise));
  }
  if (const YamlNode* seq = Get(root, "", "sequences")) {
    RETURN_IF_ERROR(ReadSequences(*seq, &spec->sequences));
  }
  if (const YamlNode* comm = Get(root, "", "comm")) {
    const std::string path = "comm";
    CommSection& c = spec->comm;
    RETURN_IF_ERROR(CheckMap(*comm, path, kCommKeys));
    RETURN_IF_ERROR(Read(*comm, path, "p2p_ms", &c.p2p_ms));
    RETURN_IF_ERROR(Read(*comm, path, "dp_allgather_ms", &c.dp_allgather_ms));
    RETURN_IF_ERROR(
        Read(*comm, path, "dp_reducescatter_ms", &c.dp_reducescatter_ms));
    RETURN_IF_ERROR(Read(*comm, path, "layernorm_ms", &c.layernorm_ms));
    RETURN_IF_ERROR(Read(*comm, path, "embedding_ms", &c.embedding_ms));
    RETURN_IF_ERROR(Read(*comm, path, "clip_ms", &c.clip_ms));
    RETURN_IF_ERROR(ReadNoise(*comm, path, &c.noise));
  }
  const YamlNode* list = Get(root, "", "stragglers");
  if (list == nullptr || list->IsNull()) return Status::Ok();
  if (list->kind != YKind::kList) {
    return Error(list->line, "stragglers",
                 "expected a list, found " + Found(*list));
  }
  for (size_t i = 0; i < list->children.size(); ++i) {
    StragglerSpec s;
    RETURN_IF_ERROR(
        ReadStraggler(list->children[i], Index("stragglers", i), &s));
    spec->stragglers.push_back(std::move(s));
  }
  return Status::Ok();
}

Status SpecReader::ReadJob(const YamlNode& node, JobSection* job) {
  const std::string path = "job";
  RETURN_IF_ERROR(CheckMap(node, path, kJobKeys));
  RETURN_IF_ERROR(Read(node, path, "dp", &job->dp));
  RETURN_IF_ERROR(Read(node, path, "pp", &job->pp));
  RETURN_IF_ERROR(Read(node, path, "tp", &job->tp));
  RETURN_IF_ERROR(Read(node, path, "cp", &job->cp));
  RETURN_IF_ERROR(Read(node, path, "vpp", &job->vpp));
  RETURN_IF_ERROR(Read(node, path, "microbatches", &job->microbatches));
  RETURN_IF_ERROR(Read(node, path, "steps", &job->steps));
  RETURN_IF_ERROR(Read(node, path, "seed", &job->seed));
  RETURN_IF_ERROR(Read(node, path, "gpus_per_node", &job->gpus_per_node));
  RETURN_IF_ERROR(Read(node, path, "gpu_hour_usd", &job->gpu_hour_usd));
  if (const YamlNode* list = Get(node, path, "microbatches_per_replica")) {
    if (list->kind != YKind::kList || list->children.empty()) {
      return Error(list->line, "job.microbatches_per_replica",
                   "expected a list of microbatch counts, found " +
                       Found(*list));
    }
    for (size_t i = 0; i < list->children.size(); ++i) {
      const YamlNode& item = list->children[i];
      const std::string item_path = Index("job.microbatches_per_replica", i);
      (*written_)[item_path] = {item.line, item.text};
      ASSIGN_OR_RETURN(const int32_t n, Convert<int32_t>(item, item_path));
      job->microbatches_per_replica.push_back(n);
    }
  }
  RETURN_IF_ERROR(Read(node, path, "drop_slowest", &job->drop_slowest));
  return Read(node, path, "backup_workers", &job->backup_workers);
}

// `layers` is a count (even partition) or a list of layers per stage.
Status SpecReader::ReadModel(const YamlNode& node, ModelSection* model) {
  const std::string path = "model";
  RETURN_IF_ERROR(CheckMap(node, path, kModelKeys));
  RETURN_IF_ERROR(Read(node, path, "loss_layer_cost", &model->loss_layer_cost));
  const YamlNode* layers = Get(node, path, "layers");
  if (layers == nullptr || layers->kind != YKind::kList) {
    return Read(node, path, "layers", &model->layers);
  }
  if (layers->children.empty()) {
    return Error(layers->line, "model.layers", "[] lists no stage");
  }
  int64_t sum = 0;
  for (size_t i = 0; i < layers->children.size(); ++i) {
    const YamlNode& item = layers->children[i];
    const std::string item_path = Index("model.layers", i);
    (*written_)[item_path] = {item.line, item.text};
    ASSIGN_OR_RETURN(const int32_t n, Convert<int32_t>(item, item_path));
    model->layers_per_stage.push_back(n);
    sum += n;
  }
  if (sum > std::numeric_limits<int32_t>::max()) {
    return Error(layers->line, "model.layers", Show(*layers) + " is too large");
  }
  model->layers = static_cast<int32_t>(sum);
  return Status::Ok();
}

// The `noise` entry of `map`, if any; an empty value means no noise.
Status SpecReader::ReadNoise(const YamlNode& map, const std::string& path,
                             NoiseSpec* noise) {
  const YamlNode* node = Get(map, path, "noise");
  if (node == nullptr || node->IsNull()) return Status::Ok();
  const std::string p = Child(path, "noise");
  ASSIGN_OR_RETURN(const Variant<NK>* dist,
                   ReadVariant<NK>(*node, p, "dist", kNoiseDists, nullptr));
  noise->kind = dist->value;
  RETURN_IF_ERROR(Read(*node, p, "sigma", &noise->sigma));
  return Read(*node, p, "sd_ms", &noise->sd_ms);
}

Status SpecReader::ReadSequences(const YamlNode& node, SequenceSection* seq) {
  if (node.IsNull()) return Status::Ok();
  const std::string path = "sequences";
  ASSIGN_OR_RETURN(
      const Variant<SK>* dist,
      ReadVariant<SK>(node, path, "dist", kSeqDists, &kSeqDists[0]));
  seq->kind = dist->value;
  RETURN_IF_ERROR(Read(node, path, "median", &seq->median));
  RETURN_IF_ERROR(Read(node, path, "sigma", &seq->sigma));
  RETURN_IF_ERROR(Read(node, path, "max", &seq->max));
  RETURN_IF_ERROR(Read(node, path, "per_microbatch", &seq->per_microbatch));
  RETURN_IF_ERROR(Read(node, path, "linear", &seq->linear));
  RETURN_IF_ERROR(Read(node, path, "quadratic", &seq->quadratic));
  RETURN_IF_ERROR(Read(node, path, "length", &seq->length));
  if (const YamlNode* file = Get(node, path, "path")) {
    if (file->kind != YKind::kScalar || file->IsNull()) {
      return Error(file->line, "sequences.path",
                   "expected a file name, found " + Found(*file));
    }
    seq->path = file->text;
  }
  if (const YamlNode* balance = Get(node, path, "balance")) {
    using B = SequenceSection::Balance;
    const std::pair<std::string_view, B> names[] = {
        {"none", B::kNone}, {"dp", B::kDp}, {"microbatch", B::kMicrobatch}};
    const auto it = std::find_if(
        std::begin(names), std::end(names),
        [&](const auto& n) { return balance->kind == YKind::kScalar &&
                                    n.first == balance->text; });
    if (it == std::end(names)) {
      return Error(balance->line, "sequences.balance",
                   (balance->kind == YKind::kScalar
                        ? "\"" + balance->text + "\""
                        : Show(*balance)) +
                       " is not none, dp or microbatch");
    }
    seq->balance = it->second;
  }
  return Status::Ok();
}

Status SpecReader::ReadStraggler(const YamlNode& node, const std::string& path,
                                 StragglerSpec* s) {
  ASSIGN_OR_RETURN(
      const Variant<StK>* kind,
      ReadVariant<StK>(node, path, "kind", kStragglerKinds, nullptr));
  s->kind = kind->value;
  RETURN_IF_ERROR(Read(node, path, "rank", &s->rank));
  RETURN_IF_ERROR(Read(node, path, "node", &s->node));
  RETURN_IF_ERROR(Read(node, path, "factor", &s->factor));
  RETURN_IF_ERROR(Read(node, path, "probability", &s->probability));
  RETURN_IF_ERROR(Read(node, path, "rate_per_step", &s->rate_per_step));
  RETURN_IF_ERROR(Read(node, path, "pause_ms", &s->pause_ms));
  RETURN_IF_ERROR(Read(node, path, "stall_ms", &s->stall_ms));
  RETURN_IF_ERROR(ReadSteps(node, path, s));
  if (const YamlNode* op = Get(node, path, "op")) {
    using Pass = StragglerSpec::Pass;
    if (op->kind == YKind::kScalar && op->text == "forward") {
      s->pass = Pass::kForward;
    } else if (op->kind == YKind::kScalar && op->text == "backward") {
      s->pass = Pass::kBackward;
    } else {
      return Error(op->line, Child(path, "op"),
                   "\"" + op->text + "\" is not one of: forward, backward");
    }
  }
  if (s->kind == StK::kSlowWorker || s->kind == StK::kSlowLink) {
    return Status::Ok();
  }
  RETURN_IF_ERROR(ReadTargets(node, path, s));
  if (s->kind != StK::kGcPause) return Status::Ok();
  const YamlNode* planned = Get(node, path, "planned");
  const bool random = node.Find("rate_per_step") != nullptr;
  if (planned == nullptr && !random) {
    return Error(node.line, path,
                 "missing key 'rate_per_step' or 'planned' (required for "
                 "kind gc_pause)");
  }
  if (planned == nullptr) return Status::Ok();
  const std::string p = Child(path, "planned");
  if (random) {
    return Error(planned->line, p,
                 "cannot be combined with rate_per_step (planned pauses "
                 "replace the random ones)");
  }
  RETURN_IF_ERROR(CheckMap(*planned, p, kEveryKeys));
  if (planned->Find("every") == nullptr) {
    return Error(planned->line, p, "missing key 'every'");
  }
  RETURN_IF_ERROR(Read(*planned, p, "every", &s->planned_every));
  if (s->planned_every < 1) {
    return Error(planned->line, Child(p, "every"),
                 std::to_string(s->planned_every) + " must be at least 1");
  }
  return Status::Ok();
}

// gc_pause and dataloader_stall act on `rank: R`, `ranks: [..]` or
// `ranks: all`.
Status SpecReader::ReadTargets(const YamlNode& node, const std::string& path,
                               StragglerSpec* s) {
  const YamlNode* ranks = Get(node, path, "ranks");
  const std::string p = Child(path, "ranks");
  const bool has_rank = node.Find("rank") != nullptr;
  if (has_rank && ranks != nullptr) {
    return Error(ranks->line, p, "cannot be combined with rank");
  }
  if (has_rank) return Status::Ok();
  if (ranks == nullptr) {
    return Error(node.line, path,
                 "missing key 'rank' or 'ranks' (a list or all)");
  }
  if (ranks->kind == YKind::kScalar && !ranks->quoted && ranks->text == "all") {
    s->all_ranks = true;
    return Status::Ok();
  }
  if (ranks->kind != YKind::kList || ranks->children.empty()) {
    return Error(ranks->line, p,
                 Show(*ranks) + " is not 'all' or a list of ranks");
  }
  for (size_t i = 0; i < ranks->children.size(); ++i) {
    const YamlNode& item = ranks->children[i];
    (*written_)[Index(p, i)] = {item.line, item.text};
    ASSIGN_OR_RETURN(const int64_t rank, Convert<int64_t>(item, Index(p, i)));
    s->ranks.push_back(rank);
  }
  return Status::Ok();
}

Status SpecReader::ReadSteps(const YamlNode& node, const std::string& path,
                             StragglerSpec* s) {
  const YamlNode* steps = Get(node, path, "steps");
  if (steps == nullptr) return Status::Ok();
  const std::string p = Child(path, "steps");
  if (steps->kind != YKind::kList || steps->children.size() != 2) {
    return Error(steps->line, p, Show(*steps) + " is not a range [from, to]");
  }
  ASSIGN_OR_RETURN(const int64_t from, Convert<int64_t>(steps->children[0], p));
  ASSIGN_OR_RETURN(const int64_t to, Convert<int64_t>(steps->children[1], p));
  (*written_)[p].text = Show(*steps);
  s->steps = std::make_pair(from, to);
  return Status::Ok();
}

}  // namespace

Result<JobSpec> ParseJobSpec(std::string_view yaml, std::string_view source) {
  ASSIGN_OR_RETURN(const YamlNode root, ParseYaml(yaml, source));
  JobSpec spec;
  spec.name = std::string(source);
  RETURN_IF_ERROR(SpecReader(source, &spec.locations).Read(root, &spec));
  RETURN_IF_ERROR(ValidateJobSpec(spec));
  return spec;
}

}  // namespace strag::sim
