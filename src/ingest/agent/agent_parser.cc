// SPDX-License-Identifier: Apache-2.0
#include "ingest/agent/agent_parser.h"

#include <simdjson.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace strag::ingest::agent {
namespace {

namespace dom = simdjson::dom;

// The record being read, and where: errors name the line and the field.
struct LineContext {
  int32_t line = 0;
  std::string_view field;
};

Status FieldError(const LineContext& at, const std::string& what) {
  return InvalidInput("line " + std::to_string(at.line) + ": field '" +
                      std::string(at.field) + "': " + what);
}

Status ReadInt(const LineContext& at, dom::element value, int64_t lo,
               int64_t hi, int64_t* out) {
  int64_t v = 0;
  if (value.get_int64().get(v) != simdjson::SUCCESS) {
    return FieldError(at, "expected an integer");
  }
  if (v < lo || v > hi) {
    return FieldError(at, std::to_string(v) + " is out of range [" +
                              std::to_string(lo) + ", " + std::to_string(hi) +
                              "]");
  }
  *out = v;
  return Status::Ok();
}

Status ReadInt32(const LineContext& at, dom::element value, int32_t lo,
                 int32_t hi, int32_t* out) {
  int64_t v = 0;
  RETURN_IF_ERROR(ReadInt(at, value, lo, hi, &v));
  *out = static_cast<int32_t>(v);
  return Status::Ok();
}

constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max() / 4;

Status ReadNs(const LineContext& at, dom::element value, int64_t* out) {
  return ReadInt(at, value, 0, kMaxNs, out);
}

Status ReadNumber(const LineContext& at, dom::element value, double* out) {
  double v = 0;
  if (value.get_double().get(v) != simdjson::SUCCESS || !(v >= 0) ||
      v > 1e300) {
    return FieldError(at, "expected a non-negative number");
  }
  *out = v;
  return Status::Ok();
}

Status ReadString(const LineContext& at, dom::element value, size_t max_len,
                  std::string* out) {
  std::string_view s;
  if (value.get_string().get(s) != simdjson::SUCCESS) {
    return FieldError(at, "expected a string");
  }
  if (s.size() > max_len) {
    return FieldError(at, "longer than " + std::to_string(max_len) + " bytes");
  }
  out->assign(s);
  return Status::Ok();
}

Status ReadColl(const LineContext& at, dom::element value, StepRecord* step) {
  dom::object groups;
  if (value.get_object().get(groups) != simdjson::SUCCESS) {
    return FieldError(at, "expected an object of [ns, count] by group");
  }
  for (auto [key, pair] : groups) {
    size_t g = 0;
    while (g < trace::kCollGroups && key != trace::kCollGroupNames[g]) ++g;
    if (g == trace::kCollGroups) {
      return FieldError(at, "unknown group '" + std::string(key) +
                                "' (dp, pp, tp, cp, ep, other)");
    }
    dom::array a;
    if (pair.get_array().get(a) != simdjson::SUCCESS || a.size() != 2) {
      return FieldError(at, "group '" + std::string(key) +
                                "': expected [ns, count]");
    }
    RETURN_IF_ERROR(ReadNs(at, a.at(0), &step->coll_ns[g]));
    RETURN_IF_ERROR(ReadInt32(at, a.at(1), 0, 1 << 30, &step->coll_n[g]));
  }
  return Status::Ok();
}

Status ReadFlags(const LineContext& at, dom::element value, uint32_t* flags) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"warmup", kFlagWarmup}, {"ckpt", kFlagCheckpoint},
      {"eval", kFlagEval},     {"skipped", kFlagSkipped},
      {"capture", kFlagCapture}};
  dom::array a;
  if (value.get_array().get(a) != simdjson::SUCCESS) {
    return FieldError(at, "expected an array of flag names");
  }
  for (dom::element e : a) {
    std::string_view name;
    if (e.get_string().get(name) != simdjson::SUCCESS) {
      return FieldError(at, "expected flag names");
    }
    bool known = false;
    for (const auto& [text, bit] : kNames) {
      if (name == text) *flags |= bit, known = true;
    }
    // Unknown flags still mark the step as not to be judged.
    if (!known) *flags |= kFlagSkipped;
  }
  return Status::Ok();
}

Status ReadStepField(const LineContext& at, dom::element v, StepRecord* s) {
  const std::string_view k = at.field;
  if (k == "step") return ReadInt(at, v, 0, kMaxNs, &s->step);
  if (k == "t_end_ns") return ReadNs(at, v, &s->t_end_ns);
  if (k == "step_ns") return ReadNs(at, v, &s->step_ns);
  if (k == "data_ns") return ReadNs(at, v, &s->data_ns);
  if (k == "fwd_ns") return ReadNs(at, v, &s->fwd_ns);
  if (k == "bwd_ns") return ReadNs(at, v, &s->bwd_ns);
  if (k == "opt_ns") return ReadNs(at, v, &s->opt_ns);
  if (k == "gc_ns") return ReadNs(at, v, &s->gc_ns);
  if (k == "gc_n") return ReadInt32(at, v, 0, 1 << 30, &s->gc_n);
  if (k == "gc_gen") return ReadInt32(at, v, -1, 2, &s->gc_gen);
  if (k == "coll") return ReadColl(at, v, s);
  if (k == "tokens") return ReadNumber(at, v, &s->tokens);
  if (k == "seqs") return ReadNumber(at, v, &s->seqs);
  if (k == "sum_s2") return ReadNumber(at, v, &s->sum_s2);
  if (k == "flags") return ReadFlags(at, v, &s->flags);
  if (k == "clock") {
    std::string clock;
    RETURN_IF_ERROR(ReadString(at, v, 8, &clock));
    if (clock != "gpu" && clock != "host") {
      return FieldError(at, "expected \"gpu\" or \"host\"");
    }
    s->gpu_clock = clock == "gpu";
  }
  return Status::Ok();
}

Status ReadRankField(const LineContext& at, dom::element v, RankInfo* r) {
  const std::string_view k = at.field;
  constexpr int32_t kBig = 1 << 24;
  if (k == "world_size") return ReadInt32(at, v, 1, kBig, &r->world_size);
  if (k == "dp") return ReadInt32(at, v, -1, kBig, &r->dp);
  if (k == "pp") return ReadInt32(at, v, -1, kBig, &r->pp);
  if (k == "tp") return ReadInt32(at, v, -1, kBig, &r->tp);
  if (k == "cp") return ReadInt32(at, v, -1, kBig, &r->cp);
  if (k == "dp_size") return ReadInt32(at, v, 0, kBig, &r->dp_size);
  if (k == "pp_size") return ReadInt32(at, v, 0, kBig, &r->pp_size);
  if (k == "tp_size") return ReadInt32(at, v, 0, kBig, &r->tp_size);
  if (k == "cp_size") return ReadInt32(at, v, 0, kBig, &r->cp_size);
  if (k == "local_rank") return ReadInt32(at, v, -1, kBig, &r->local_rank);
  if (k == "microbatches") return ReadInt32(at, v, 0, kBig, &r->microbatches);
  if (k == "pid") return ReadInt(at, v, 0, kMaxNs, &r->pid);
  if (k == "usd_per_gpu_hour") return ReadNumber(at, v, &r->usd_per_gpu_hour);
  if (k == "host") return ReadString(at, v, 256, &r->host);
  if (k == "device") return ReadString(at, v, 64, &r->device);
  if (k == "torch") return ReadString(at, v, 64, &r->torch_version);
  if (k == "agent") return ReadString(at, v, 64, &r->agent_version);
  return Status::Ok();
}

}  // namespace

bool ValidJobName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

struct AgentParser::Impl {
  AgentLimits limits;
  dom::parser parser;
  std::vector<char> padded;  // the line, followed by simdjson's padding

  Status Line(std::string_view text, int32_t line, AgentBatch* batch);
  Status Keys(dom::object obj, LineContext* at, RecordHeader* h,
              std::string_view* kind, std::string_view* job);
};

Status AgentParser::Impl::Keys(dom::object obj, LineContext* at,
                               RecordHeader* h, std::string_view* kind,
                               std::string_view* job) {
  bool has_rank = false, has_epoch = false, has_seq = false;
  for (auto [key, value] : obj) {
    at->field = key;
    if (key == "kind") {
      if (value.get_string().get(*kind) != simdjson::SUCCESS) {
        return FieldError(*at, "expected a string");
      }
    } else if (key == "job") {
      if (value.get_string().get(*job) != simdjson::SUCCESS ||
          !ValidJobName(*job)) {
        return FieldError(*at, "expected 1-128 bytes of [A-Za-z0-9._:-]");
      }
    } else if (key == "rank") {
      RETURN_IF_ERROR(ReadInt32(*at, value, 0, limits.max_rank, &h->rank));
      has_rank = true;
    } else if (key == "epoch") {
      RETURN_IF_ERROR(ReadInt(*at, value, 0, kMaxNs, &h->epoch));
      has_epoch = true;
    } else if (key == "seq") {
      RETURN_IF_ERROR(ReadInt(*at, value, 1, kMaxNs, &h->seq));
      has_seq = true;
    }
  }
  const char* missing = kind->empty()  ? "kind"
                        : job->empty() ? "job"
                        : !has_rank    ? "rank"
                        : !has_epoch   ? "epoch"
                        : !has_seq     ? "seq"
                                       : nullptr;
  if (missing != nullptr) {
    return InvalidInput("line " + std::to_string(at->line) +
                        ": missing field '" + missing + "'");
  }
  return Status::Ok();
}

Status AgentParser::Impl::Line(std::string_view text, int32_t line,
                               AgentBatch* batch) {
  if (static_cast<int64_t>(text.size()) > limits.max_line_bytes) {
    return InvalidInput("line " + std::to_string(line) + ": longer than " +
                        std::to_string(limits.max_line_bytes) + " bytes");
  }
  padded.resize(text.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(padded.data(), text.data(), text.size());
  dom::element doc;
  dom::object obj;
  if (auto e = parser.parse(padded.data(), text.size(), false).get(doc);
      e != simdjson::SUCCESS) {
    return InvalidInput("line " + std::to_string(line) +
                        ": not JSON: " + simdjson::error_message(e));
  }
  if (doc.get_object().get(obj) != simdjson::SUCCESS) {
    return InvalidInput("line " + std::to_string(line) +
                        ": expected a JSON object");
  }
  LineContext at{line, {}};
  RecordHeader h;
  h.line = line;
  std::string_view kind, job;
  RETURN_IF_ERROR(Keys(obj, &at, &h, &kind, &job));
  int32_t j = 0;
  while (j < static_cast<int32_t>(batch->jobs.size()) && batch->jobs[j] != job)
    ++j;
  if (j == static_cast<int32_t>(batch->jobs.size())) {
    batch->jobs.emplace_back(job);
  }
  h.job = j;
  if (kind == "step") {
    StepRecord s;
    bool has_step = false, has_ns = false;
    for (auto [key, value] : obj) {
      at.field = key;
      has_step |= key == "step";
      has_ns |= key == "step_ns";
      RETURN_IF_ERROR(ReadStepField(at, value, &s));
    }
    if (!has_step || !has_ns) {
      return InvalidInput("line " + std::to_string(line) +
                          ": missing field '" +
                          (has_step ? "step_ns" : "step") + "'");
    }
    h.kind = RecordKind::kStep;
    h.index = static_cast<int32_t>(batch->steps.size());
    batch->steps.push_back(s);
  } else if (kind == "rank") {
    RankInfo r;
    for (auto [key, value] : obj) {
      at.field = key;
      RETURN_IF_ERROR(ReadRankField(at, value, &r));
    }
    h.kind = RecordKind::kRank;
    h.index = static_cast<int32_t>(batch->ranks.size());
    batch->ranks.push_back(std::move(r));
  } else if (kind == "drop") {
    DropRecord d;
    for (auto [key, value] : obj) {
      at.field = key;
      if (key == "first_seq") RETURN_IF_ERROR(ReadInt(at, value, 1, kMaxNs, &d.first_seq));
      if (key == "last_seq") RETURN_IF_ERROR(ReadInt(at, value, 1, kMaxNs, &d.last_seq));
    }
    if (d.first_seq == 0 || d.last_seq < d.first_seq || d.last_seq != h.seq) {
      return InvalidInput("line " + std::to_string(line) +
                          ": a drop record needs 1 <= first_seq <= last_seq "
                          "= seq");
    }
    h.kind = RecordKind::kDrop;
    h.index = static_cast<int32_t>(batch->drops.size());
    batch->drops.push_back(d);
  } else {
    at.field = "kind";
    return FieldError(at, "'" + std::string(kind) +
                              "' is not one of rank, step, drop");
  }
  batch->records.push_back(h);
  return Status::Ok();
}

AgentParser::AgentParser(AgentLimits limits) : impl_(std::make_unique<Impl>()) {
  impl_->limits = limits;
}
AgentParser::~AgentParser() = default;

Result<AgentBatch> AgentParser::Parse(std::string_view body) {
  AgentBatch batch;
  int32_t line = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view text = body.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (static_cast<int64_t>(batch.records.size()) >= impl_->limits.max_records) {
      return InvalidInput("line " + std::to_string(line) + ": more than " +
                          std::to_string(impl_->limits.max_records) +
                          " records in one request");
    }
    RETURN_IF_ERROR(impl_->Line(text, line, &batch));
  }
  return batch;
}

}  // namespace strag::ingest::agent
