// SPDX-License-Identifier: Apache-2.0
#include "ingest/agent/agent_writer.h"

#include <charconv>
#include <utility>

namespace strag::ingest::agent {
namespace {

void Int(std::string* out, std::string_view key, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  *out += ",\"";
  *out += key;
  *out += "\":";
  out->append(buf, end);
}

void Real(std::string* out, std::string_view key, double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  *out += ",\"";
  *out += key;
  *out += "\":";
  out->append(buf, end);
}

// Strings the writer is given are names (job, host, versions): escaped for
// quotes, backslashes and control bytes all the same.
void Str(std::string* out, std::string_view key, std::string_view v) {
  *out += ",\"";
  *out += key;
  *out += "\":\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      *out += "\\u00";
      *out += kHex[(c >> 4) & 0xf];
      *out += kHex[c & 0xf];
    } else {
      *out += c;
    }
  }
  *out += '"';
}

void Head(std::string* out, const char* kind, const StreamId& id, int64_t seq) {
  *out += "{\"kind\":\"";
  *out += kind;
  *out += '"';
  Str(out, "job", id.job);
  Int(out, "rank", id.rank);
  Int(out, "epoch", id.epoch);
  Int(out, "seq", seq);
}

}  // namespace

void AppendRankLine(const StreamId& id, int64_t seq, const RankInfo& r,
                    std::string* out) {
  Head(out, "rank", id, seq);
  if (r.world_size > 0) Int(out, "world_size", r.world_size);
  Int(out, "dp", r.dp);
  Int(out, "pp", r.pp);
  Int(out, "tp", r.tp);
  Int(out, "cp", r.cp);
  Int(out, "dp_size", r.dp_size);
  Int(out, "pp_size", r.pp_size);
  Int(out, "tp_size", r.tp_size);
  Int(out, "cp_size", r.cp_size);
  Int(out, "local_rank", r.local_rank);
  Int(out, "microbatches", r.microbatches);
  Int(out, "pid", r.pid);
  if (r.usd_per_gpu_hour > 0) Real(out, "usd_per_gpu_hour", r.usd_per_gpu_hour);
  Str(out, "host", r.host);
  Str(out, "device", r.device);
  Str(out, "torch", r.torch_version);
  Str(out, "agent", r.agent_version);
  *out += "}\n";
}

void AppendStepLine(const StreamId& id, int64_t seq, const StepRecord& s,
                    std::string* out) {
  Head(out, "step", id, seq);
  Int(out, "step", s.step);
  Int(out, "t_end_ns", s.t_end_ns);
  Int(out, "step_ns", s.step_ns);
  Int(out, "data_ns", s.data_ns);
  Int(out, "fwd_ns", s.fwd_ns);
  Int(out, "bwd_ns", s.bwd_ns);
  Int(out, "opt_ns", s.opt_ns);
  Int(out, "gc_ns", s.gc_ns);
  Int(out, "gc_n", s.gc_n);
  Int(out, "gc_gen", s.gc_gen);
  *out += ",\"coll\":{";
  bool first = true;
  for (size_t g = 0; g < trace::kCollGroups; ++g) {
    if (s.coll_ns[g] == 0 && s.coll_n[g] == 0) continue;
    *out += first ? "\"" : ",\"";
    first = false;
    *out += trace::kCollGroupNames[g];
    *out += "\":[" + std::to_string(s.coll_ns[g]) + "," +
            std::to_string(s.coll_n[g]) + "]";
  }
  *out += '}';
  if (s.tokens > 0) Real(out, "tokens", s.tokens);
  if (s.seqs > 0) Real(out, "seqs", s.seqs);
  if (s.sum_s2 > 0) Real(out, "sum_s2", s.sum_s2);
  if (s.flags != 0) {
    static constexpr std::pair<uint32_t, const char*> kNames[] = {
        {kFlagWarmup, "warmup"}, {kFlagCheckpoint, "ckpt"}, {kFlagEval, "eval"},
        {kFlagSkipped, "skipped"}, {kFlagCapture, "capture"}};
    *out += ",\"flags\":[";
    bool first_flag = true;
    for (const auto& [bit, name] : kNames) {
      if ((s.flags & bit) == 0) continue;
      *out += first_flag ? "\"" : ",\"";
      first_flag = false;
      *out += name;
      *out += '"';
    }
    *out += ']';
  }
  *out += s.gpu_clock ? ",\"clock\":\"gpu\"" : ",\"clock\":\"host\"";
  *out += "}\n";
}

void AppendDropLine(const StreamId& id, const DropRecord& d, std::string* out) {
  Head(out, "drop", id, d.last_seq);
  Int(out, "first_seq", d.first_seq);
  Int(out, "last_seq", d.last_seq);
  *out += "}\n";
}

}  // namespace strag::ingest::agent
