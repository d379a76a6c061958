// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_writer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "base/json_writer.h"
#include "ingest/kineto/kineto_vocabulary.h"
#include "trace/op_type.h"

namespace strag::ingest {
namespace {

using kineto_export::OpType;
using kineto_export::Kind;
using kineto_export::KindOf;
using kineto_export::TypeOrder;
using kineto_export::IsComm;
using kineto_export::IsFloat;
using kineto_export::NcclKernelName;
using kineto_export::ComputeKernelName;
using kineto_export::ComputeOpName;
using kineto_export::Message;
using kineto_export::MessageOf;
using kineto_export::AppendInt;
using kineto_export::AppendUs;
using kineto_export::RanksText;
using kineto_export::EventText;

// The CPU side, when nothing else is on the thread: a kernel is launched
// kLaunchLeadNs before it starts and the launch call lasts kLaunchDurNs.
constexpr int64_t kLaunchLeadNs = 6000;
constexpr int64_t kLaunchDurNs = 4000;
// A kernel that starts this long after every earlier kernel of its rank has
// ended waited for the host.
constexpr int64_t kHostLateNs = 20000;
constexpr int64_t kComputeStream = 7;
constexpr int64_t kFirstCommStream = 20;  // + the group's index on the rank
constexpr int64_t kPidBase = 100000;      // CPU process id = base + rank
constexpr int64_t kBaseTimeNanoseconds = 1'700'000'000'000'000'000;
constexpr int32_t kMaxKernelsPerCompute = 1000;
constexpr size_t kListedRanks = 30;  // PyTorch's kTruncatLength

}  // namespace

// One kernel (or the CPU pause of a gc op) of a rank, on the table's clock.
struct KinetoExport::Item {
  int64_t start = 0, end = 0;
  // Program order (the host issues kernels in this order), as Megatron's
  // 1F1B loop issues them: compute, its send, then the receive of the next
  // compute (send_backward_recv_forward ...); anything else at its start.
  // `sub` orders items of one anchor.
  int64_t anchor = 0;
  int sub = 4;
  int64_t launch = 0;   // start of its CPU event
  int64_t cpu_dur = 0;  // duration of its CPU event
  uint32_t row = 0;
  int32_t op_index = 0;  // position of the op in the rank's sorted rows
  int32_t piece = 0;     // kernel index within a compute op
  int32_t group = -1;    // process group of a communication op
  int32_t peer = -1;     // Kineto rank of a send's / recv's peer
};

Result<KinetoExport> KinetoExport::Build(const trace::OpsTable& table,
                                         const trace::JobMeta& meta,
                                         const KinetoExportOptions& options) {
  if (options.kernels_per_compute < 1 ||
      options.kernels_per_compute > kMaxKernelsPerCompute) {
    return InvalidInput("kineto export: kernels per compute op must be in 1.." +
                        std::to_string(kMaxKernelsPerCompute) + ", got " +
                        std::to_string(options.kernels_per_compute));
  }
  if (!(options.max_clock_offset_ms >= 0.0 &&
        options.max_clock_offset_ms <= 1e6)) {
    return InvalidInput("kineto export: the clock offset must be in 0..1e6 ms");
  }
  if (options.gpus_per_node < 1) {
    return InvalidInput("kineto export: gpus per node must be at least 1");
  }
  if (table.size() >= std::numeric_limits<uint32_t>::max()) {
    return InvalidInput("kineto export: more than 2^32 - 1 ops");
  }
  if (table.size() == 0) {
    return InvalidInput("kineto export: the table has no ops (an empty "
                        "--steps-window?)");
  }
  KinetoExport out;
  out.table_ = &table;
  out.options_ = options;
  RETURN_IF_ERROR(out.FindWorkers(meta));
  // The embedding group holds the first and the last stage only.
  for (size_t i = 0; i < table.size(); ++i) {
    if (table.op_type[i] == OpType::kEmbeddingGradsAllReduce &&
        table.pp[i] != 0 && table.pp[i] != out.pp_ - 1) {
      return InvalidInput("kineto export: row " + std::to_string(i) +
                          ": embedding-grads-all-reduce on stage " +
                          std::to_string(table.pp[i]) +
                          ", which is neither the first nor the last");
    }
  }
  out.IndexRows();
  out.BuildGroups();
  if (!options.clock_offset_ns.empty()) {
    if (options.clock_offset_ns.size() != out.workers_.size()) {
      return InvalidInput(
          "kineto export: " + std::to_string(options.clock_offset_ns.size()) +
          " clock offsets for " + std::to_string(out.workers_.size()) +
          " ranks");
    }
    for (KinetoWorker& w : out.workers_) {
      w.clock_offset_ns =
          options.clock_offset_ns[static_cast<size_t>(w.rank)];
    }
  }
  return out;
}

Status KinetoExport::FindWorkers(const trace::JobMeta& meta) {
  const trace::OpsTable& t = *table_;
  int32_t max_dp = -1, max_pp = -1, max_chunk = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.dp[i] < 0 || t.pp[i] < 0) {
      return InvalidInput("kineto export: row " + std::to_string(i) +
                          ": negative dp rank or stage");
    }
    if (trace::IsGeneric(t.op_type[i])) {
      return InvalidInput("kineto export: row " + std::to_string(i) +
                          ": op type '" +
                          std::string(trace::OpTypeName(t.op_type[i])) +
                          "' is not a Megatron op type");
    }
    max_dp = std::max(max_dp, t.dp[i]);
    max_pp = std::max(max_pp, t.pp[i]);
    max_chunk = std::max(max_chunk, t.chunk[i]);
  }
  dp_ = max_dp + 1;
  pp_ = max_pp + 1;
  vpp_ = std::max({meta.vpp, max_chunk + 1, 1});
  const size_t cells = static_cast<size_t>(dp_) * static_cast<size_t>(pp_);
  if (cells > t.size()) {  // some (dp, stage) has no row
    return InvalidInput("kineto export: the table has " +
                        std::to_string(t.size()) + " rows, fewer than its " +
                        std::to_string(dp_) + " x " + std::to_string(pp_) +
                        " (dp, stage) workers");
  }
  std::vector<int32_t> global(cells, -1);
  for (size_t i = 0; i < t.size(); ++i) {
    int32_t& g = global[static_cast<size_t>(t.dp[i]) * pp_ + t.pp[i]];
    if (g >= 0 && g != t.rank[i]) {
      return InvalidInput("kineto export: row " + std::to_string(i) +
                          ": worker (dp " + std::to_string(t.dp[i]) +
                          ", stage " + std::to_string(t.pp[i]) +
                          ") has ranks " + std::to_string(g) + " and " +
                          std::to_string(t.rank[i]));
    }
    g = t.rank[i];
  }
  std::vector<size_t> order(cells);
  for (size_t c = 0; c < cells; ++c) {
    if (global[c] < 0) {
      return InvalidInput("kineto export: no rows for worker (dp " +
                          std::to_string(c / pp_) + ", stage " +
                          std::to_string(c % pp_) + ")");
    }
    order[c] = c;
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return global[a] < global[b]; });
  worker_of_.assign(cells, -1);
  for (size_t k = 0; k < cells; ++k) {
    const size_t c = order[k];
    if (k > 0 && global[order[k - 1]] == global[c]) {
      return InvalidInput("kineto export: rank " + std::to_string(global[c]) +
                          " is two workers (dp, stage)");
    }
    const auto rank = static_cast<int32_t>(k);
    worker_of_[c] = rank;
    workers_.push_back(KinetoWorker{
        .rank = rank,
        .global_rank = global[c],
        .dp = static_cast<int32_t>(c / static_cast<size_t>(pp_)),
        .stage = static_cast<int32_t>(c % static_cast<size_t>(pp_)),
        .device = global[c] % options_.gpus_per_node,
    });
  }
  return Status::Ok();
}

void KinetoExport::IndexRows() {
  const trace::OpsTable& t = *table_;
  row_begin_.assign(workers_.size() + 1, 0);
  for (size_t i = 0; i < t.size(); ++i) {
    ++row_begin_[static_cast<size_t>(Worker(t.dp[i], t.pp[i])) + 1];
  }
  for (size_t r = 0; r < workers_.size(); ++r) {
    row_begin_[r + 1] += row_begin_[r];
  }
  std::vector<size_t> next(row_begin_.begin(), row_begin_.end() - 1);
  rows_.resize(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    rows_[next[static_cast<size_t>(Worker(t.dp[i], t.pp[i]))]++] =
        static_cast<uint32_t>(i);
  }
}

int32_t KinetoExport::AddGroup(std::string desc, std::vector<int32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const auto index = static_cast<int32_t>(groups_.size());
  Group g{std::move(desc), std::move(ranks), "", ""};
  g.ranks_text = RanksText(g.ranks);
  std::string& a = g.args;
  a = "\"Group size\": " + std::to_string(g.ranks.size());
  // PyTorch names a group by its first rank and stride when the ranks are
  // an arithmetic progression.
  int64_t stride = g.ranks.size() > 1 ? g.ranks[1] - g.ranks[0] : 1;
  for (size_t i = 1; i < g.ranks.size(); ++i) {
    if (g.ranks[i] - g.ranks[i - 1] != stride) stride = 0;
  }
  if (stride > 0) {
    a += ", \"Global rank start\": " + std::to_string(g.ranks[0]) +
         ", \"Global rank stride\": " + std::to_string(stride);
  }
  a += ", \"Process Group Name\": \"" + std::to_string(index) +
       "\", \"Process Group Description\": \"" + g.desc +
       "\", \"Process Group Ranks\": \"" +
       (options_.truncate_rank_lists ? RanksText(g.ranks, kListedRanks)
                                     : g.ranks_text) +
       "\"";
  for (int32_t r : g.ranks) member_of_[static_cast<size_t>(r)].push_back(index);
  groups_.push_back(std::move(g));
  return index;
}

// Group names are indices in one fixed order, the same in every file: the
// default group, the DP group of each stage, the embedding group of each DP
// replica, a one-member group per rank for the layernorm all-reduce (its TP
// peers are not traced), then per (dp, sender stage) the forward and the
// backward send -> recv pair (directed, so that Seq counts the same ops on
// both members). Each rank lists the groups it belongs to.
void KinetoExport::BuildGroups() {
  const auto n = static_cast<int32_t>(workers_.size());
  member_of_.assign(workers_.size(), {});
  std::vector<int32_t> all(static_cast<size_t>(n));
  for (int32_t r = 0; r < n; ++r) all[static_cast<size_t>(r)] = r;
  AddGroup("default_pg", all);
  dp_group_base_ = static_cast<int32_t>(groups_.size());
  for (int32_t s = 0; s < pp_; ++s) {
    std::vector<int32_t> ranks;
    for (int32_t d = 0; d < dp_; ++d) ranks.push_back(Worker(d, s));
    AddGroup("DATA_PARALLEL_GROUP", std::move(ranks));
  }
  embedding_base_ = static_cast<int32_t>(groups_.size());
  for (int32_t d = 0; d < dp_; ++d) {
    AddGroup("EMBEDDING_GROUP", {Worker(d, 0), Worker(d, pp_ - 1)});
  }
  tp_base_ = static_cast<int32_t>(groups_.size());
  for (int32_t r = 0; r < n; ++r) AddGroup("TENSOR_MODEL_PARALLEL_GROUP", {r});
  p2p_group_.assign(static_cast<size_t>(dp_) * pp_ * 2, -1);
  if (pp_ < 2) return;
  for (int32_t d = 0; d < dp_; ++d) {
    for (int32_t s = 0; s < pp_; ++s) {
      const size_t at = (static_cast<size_t>(d) * pp_ + s) * 2;
      if (s + 1 < pp_ || vpp_ > 1) {
        p2p_group_[at] = AddGroup("PIPELINE_FORWARD_GROUP",
                                  {Worker(d, s), Worker(d, (s + 1) % pp_)});
      }
      if (s > 0 || vpp_ > 1) {
        p2p_group_[at + 1] =
            AddGroup("PIPELINE_BACKWARD_GROUP",
                     {Worker(d, s), Worker(d, (s - 1 + pp_) % pp_)});
      }
    }
  }
}

// A send / recv is a type-2 no-op (whatif-spec.md §3.2) when the chunk next
// to its compute's in the direction of travel does not exist. The compute
// is the one of the same direction and seq_id, as the schedules write them.
bool KinetoExport::ValidP2p(size_t row, const std::vector<int32_t>& fwd_chunk,
                            const std::vector<int32_t>& bwd_chunk) const {
  const trace::OpsTable& t = *table_;
  if (pp_ < 2) return false;
  const OpType type = t.op_type[row];
  const bool forward =
      type == OpType::kForwardSend || type == OpType::kForwardRecv;
  const std::vector<int32_t>& chunks = forward ? fwd_chunk : bwd_chunk;
  const auto seq = static_cast<size_t>(std::max(t.seq_id[row], 0));
  const int32_t chunk = seq < chunks.size() && chunks[seq] >= 0
                            ? chunks[seq]
                            : std::max(t.chunk[row], 0);
  const bool up = type == OpType::kForwardSend || type == OpType::kBackwardRecv;
  const int64_t peer = int64_t{chunk} * pp_ + t.pp[row] + (up ? 1 : -1);
  return peer >= 0 && peer < int64_t{vpp_} * pp_;
}

void KinetoExport::GroupAndPeer(size_t row, int32_t rank, Item* item) const {
  const trace::OpsTable& t = *table_;
  const int32_t d = t.dp[row], s = t.pp[row];
  const int32_t up = (s + 1) % pp_, down = (s - 1 + pp_) % pp_;
  auto p2p = [&](int32_t sender, bool backward, int32_t peer_stage) {
    item->group = p2p_group_[(static_cast<size_t>(d) * pp_ + sender) * 2 +
                             (backward ? 1 : 0)];
    item->peer = Worker(d, peer_stage);
  };
  switch (t.op_type[row]) {
    case OpType::kForwardSend:
      return p2p(s, false, up);
    case OpType::kForwardRecv:
      return p2p(down, false, down);
    case OpType::kBackwardSend:
      return p2p(s, true, down);
    case OpType::kBackwardRecv:
      return p2p(up, true, up);
    case OpType::kLayernormGradsAllReduce:
      item->group = tp_base_ + rank;
      return;
    case OpType::kEmbeddingGradsAllReduce:
      item->group = embedding_base_ + d;
      return;
    case OpType::kOptimizerClipMainGrad:
      item->group = 0;
      return;
    default:  // the DP collectives
      item->group = dp_group_base_ + s;
  }
}

// The rank's kernels and pauses in launch order, with their CPU times.
// The items of rows [a, b) of `rows`, one step of the rank, sorted by start.
void KinetoExport::AddStepItems(int32_t rank, const std::vector<uint32_t>& rows,
                                size_t a, size_t b, std::vector<Item>* items,
                                KinetoRankStats* stats) const {
  const trace::OpsTable& t = *table_;
  std::vector<int32_t> fwd_chunk, bwd_chunk;  // by compute seq_id
  for (size_t k = a; k < b; ++k) {
    const uint32_t i = rows[k];
    if (!trace::IsCompute(t.op_type[i]) || t.seq_id[i] < 0) continue;
    auto& chunks =
        t.op_type[i] == OpType::kForwardCompute ? fwd_chunk : bwd_chunk;
    const auto seq = static_cast<size_t>(t.seq_id[i]);
    if (chunks.size() <= seq) chunks.resize(seq + 1, -1);
    chunks[seq] = t.chunk[i] >= 0          ? t.chunk[i]
                  : t.global_chunk[i] >= 0 ? t.global_chunk[i] / pp_
                                           : 0;
  }
  // The step's forward / backward computes by start; for each, by
  // (backward?, seq_id), its start and the end of the one before it (-1).
  std::vector<uint32_t> computes;
  for (size_t k = a; k < b; ++k) {
    if (trace::IsCompute(t.op_type[rows[k]])) computes.push_back(rows[k]);
  }
  std::sort(computes.begin(), computes.end(), [&t](uint32_t x, uint32_t y) {
    return std::pair(t.start_ns[x], x) < std::pair(t.start_ns[y], y);
  });
  std::map<std::pair<bool, int32_t>, std::tuple<int64_t, int64_t, int64_t>>
      compute;  // (start, end, end of the previous compute or -1)
  for (size_t k = 0; k < computes.size(); ++k) {
    const uint32_t i = computes[k];
    const uint32_t before = k > 0 ? computes[k - 1] : i;
    compute[{t.op_type[i] == OpType::kBackwardCompute, t.seq_id[i]}] = {
        t.start_ns[i], t.start_ns[i] + t.dur_ns[i],
        k > 0 ? t.start_ns[before] + t.dur_ns[before] : -1};
  }
  auto anchor = [&](uint32_t i, Item* item) {
    const OpType type = t.op_type[i];
    item->anchor = t.start_ns[i];
    if (!trace::IsP2p(type)) return;
    const bool backward =
        type == OpType::kBackwardSend || type == OpType::kBackwardRecv;
    const bool recv =
        type == OpType::kForwardRecv || type == OpType::kBackwardRecv;
    const auto it = compute.find({backward, t.seq_id[i]});
    if (it == compute.end()) return;
    const auto [start, end, end_before] = it->second;
    if (!recv) {
      item->anchor = end, item->sub = 2;  // right after its compute
    } else if (end_before >= 0) {
      item->anchor = end_before, item->sub = 3;  // after the previous send
    } else {
      item->anchor = start, item->sub = 0;  // before the first compute
    }
  };
  const size_t first = items->size();
  const int32_t pieces = options_.kernels_per_compute;
  for (size_t k = a; k < b; ++k) {
    const uint32_t i = rows[k];
    Item item{.start = t.start_ns[i],
              .end = t.start_ns[i] + t.dur_ns[i],
              .row = i,
              .op_index = static_cast<int32_t>(k)};
    anchor(i, &item);
    const Kind kind = KindOf(t.op_type[i]);
    const bool p2p = kind == Kind::kSend || kind == Kind::kRecv;
    if (IsComm(kind) && (!p2p || ValidP2p(i, fwd_chunk, bwd_chunk))) {
      GroupAndPeer(i, rank, &item);
    }
    if (p2p && item.group < 0) {
      ++stats->skipped_noop_p2p;
      continue;
    }
    if (kind != Kind::kCompute) {
      items->push_back(item);
      continue;
    }
    for (int32_t p = 0; p < pieces; ++p) {
      item.piece = p;
      item.start = t.start_ns[i] + t.dur_ns[i] * p / pieces;
      item.end = t.start_ns[i] + t.dur_ns[i] * (p + 1) / pieces;
      item.anchor = item.start;
      items->push_back(item);
    }
  }
  auto key = [&t](const Item& x) {
    return std::tuple(x.anchor, x.sub, x.start, x.end,
                      TypeOrder(t.op_type[x.row]), t.seq_id[x.row], x.row,
                      x.piece);
  };
  std::sort(items->begin() + static_cast<ptrdiff_t>(first), items->end(),
            [&](const Item& x, const Item& y) { return key(x) < key(y); });
}

// Launches in program order. The host runs ahead of the GPU, as a real
// training loop does: each launch follows the previous one's 4 us call,
// except for a host-late kernel, one that starts more than kHostLateNs after
// every earlier kernel of the rank has ended (nothing on the device explains
// the gap: the host was busy, e.g. loading data), which is launched
// kLaunchLeadNs before it starts. Calls shrink (to 1 ns) where later kernels
// leave no room: every launch comes kLaunchLeadNs before its own kernel and
// every later one, so launches stay distinct and in program order; a gc
// pause sits at its own time and holds the thread. Each CPU event ends by
// the next one's start.
void KinetoExport::AssignCpuTimes(std::vector<Item>* items) const {
  const trace::OpsTable& t = *table_;
  auto is_gc = [&](const Item& it) { return t.op_type[it.row] == OpType::kGc; };
  std::vector<int64_t> latest(items->size());
  int64_t bound = std::numeric_limits<int64_t>::max();
  for (size_t k = items->size(); k-- > 0;) {
    const Item& it = (*items)[k];
    bound = std::min(bound, it.start - (is_gc(it) ? 0 : kLaunchLeadNs));
    latest[k] = bound;
  }
  int64_t prev = std::numeric_limits<int64_t>::min();  // previous launch
  int64_t busy = std::numeric_limits<int64_t>::min();  // gc holds the thread
  int64_t ended = std::numeric_limits<int64_t>::min();  // earlier items
  for (size_t k = 0; k < items->size(); ++k) {
    Item& it = (*items)[k];
    const bool gc = is_gc(it);
    const bool late = gc || k == 0 || it.start - ended > kHostLateNs;
    const int64_t after = k == 0 ? it.start : prev + kLaunchDurNs;
    const int64_t wanted = gc ? it.start : late ? latest[k] : after;
    const int64_t floor = std::max(busy, k == 0 ? wanted : prev + 1);
    it.launch = std::min(it.start, std::max(floor, std::min(wanted, latest[k])));
    prev = it.launch;
    if (gc) busy = it.launch + std::max<int64_t>(it.end - it.start, 1);
    ended = std::max(ended, it.end);
  }
  for (size_t k = 0; k < items->size(); ++k) {
    Item& it = (*items)[k];
    const bool gc = t.op_type[it.row] == OpType::kGc;
    const int64_t room = k + 1 < items->size()
                             ? (*items)[k + 1].launch - it.launch
                             : std::numeric_limits<int64_t>::max();
    it.cpu_dur = std::max<int64_t>(
        0, std::min(gc ? it.end - it.start : kLaunchDurNs, room));
  }
}

// The rank's kernels and pauses in launch order, with their CPU times.
std::vector<KinetoExport::Item> KinetoExport::Items(
    int32_t rank, KinetoRankStats* stats) const {
  const trace::OpsTable& t = *table_;
  const auto r = static_cast<size_t>(rank);
  std::vector<uint32_t> rows(
      rows_.begin() + static_cast<ptrdiff_t>(row_begin_[r]),
      rows_.begin() + static_cast<ptrdiff_t>(row_begin_[r + 1]));
  auto key = [&t](uint32_t i) {
    return std::tuple(t.step[i], t.start_ns[i], t.start_ns[i] + t.dur_ns[i],
                      TypeOrder(t.op_type[i]), t.seq_id[i], i);
  };
  std::sort(rows.begin(), rows.end(),
            [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  std::vector<Item> items;
  for (size_t a = 0, b = 0; a < rows.size(); a = b) {
    while (b < rows.size() && t.step[rows[b]] == t.step[rows[a]]) ++b;
    AddStepItems(rank, rows, a, b, &items, stats);
  }
  AssignCpuTimes(&items);
  return items;
}

void KinetoExport::WriteHeader(int32_t rank, std::string* out) const {
  const KinetoWorker& w = workers_[static_cast<size_t>(rank)];
  const bool now = options_.nccl_names == NcclKernelNames::kNew;
  const auto& groups = member_of_[static_cast<size_t>(rank)];
  out->append("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
  out->append("    {\"id\": ");
  AppendInt(out, w.device);
  out->append(
      ", \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": "
      "85045526528, \"computeMajor\": 9, \"computeMinor\": 0, "
      "\"maxThreadsPerBlock\": 1024, \"warpSize\": 32, \"numSms\": 132}\n  "
      "],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
  AppendInt(out, rank);
  out->append(", \"world_size\": ");
  AppendInt(out, static_cast<int64_t>(workers_.size()));
  out->append(", \"pg_count\": ");
  AppendInt(out, static_cast<int64_t>(groups.size()));
  out->append(", \"pg_config\": [");
  for (size_t k = 0; k < groups.size(); ++k) {
    const Group& g = groups_[static_cast<size_t>(groups[k])];
    out->append(k ? ",\n    " : "\n    ");
    out->append("{\"pg_name\": \"");
    AppendInt(out, groups[k]);
    out->append("\", \"pg_desc\": \"").append(g.desc);
    out->append("\", \"backend_config\": \"cuda:nccl\", \"pg_size\": ");
    AppendInt(out, static_cast<int64_t>(g.ranks.size()));
    out->append(", \"ranks\": ").append(g.ranks_text).append("}");
  }
  out->append("],\n    \"nccl_version\": \"");
  out->append(now ? "2.21.5" : "2.17.1");
  out->append("\"},\n  \"traceEvents\": [");
}

// Where one rank's events go, on its own clock: table ns + shift.
struct KinetoExport::Sink {
  EventText ev;
  int64_t shift = 0;  // kKinetoTimeOriginNs + clock offset
  int64_t pid = 0;    // CPU process (and thread)
  int64_t device = 0;
  int64_t correlation = 0;  // of the last kernel

  void Metadata(int64_t t0, size_t comm_streams) {
    auto meta = [&](std::string_view name, int64_t p, int64_t tid,
                    std::string_view key, std::string_view value) {
      ev.Begin("M", "", name, p, tid, shift + t0);
      ev.BeginArgs();
      ev.ArgString(key, value);
      ev.End();
    };
    meta("process_name", pid, 0, "name", "python3");
    meta("process_labels", pid, 0, "labels", "CPU");
    meta("thread_name", pid, pid, "name",
         "thread " + std::to_string(pid) + " (python3)");
    meta("process_name", device, 0, "name", "python3");
    meta("process_labels", device, 0, "labels",
         "GPU " + std::to_string(device));
    for (size_t k = 0; k <= comm_streams; ++k) {
      const int64_t stream =
          k == 0 ? kComputeStream
                 : kFirstCommStream + static_cast<int64_t>(k) - 1;
      meta("thread_name", device, stream, "name",
           "stream " + std::to_string(stream) + " ");
    }
  }

  // A complete event on the CPU thread; `args` may be empty.
  void Cpu(std::string_view cat, std::string_view name, int64_t ts, int64_t dur,
           std::string_view id_key, int64_t id, std::string_view args) {
    ev.Begin("X", cat, name, pid, pid, shift + ts);
    ev.Dur(dur);
    ev.BeginArgs();
    ev.Arg(id_key, id);
    ev.ArgsText(args);
    ev.End();
  }

  // A kernel and its cudaLaunchKernel; `comm_args` is empty for compute.
  void Kernel(std::string_view name, int64_t stream, int64_t external,
              int64_t launch, int64_t launch_dur, int64_t start, int64_t end,
              std::string_view comm_args) {
    ++correlation;
    ev.Begin("X", "cuda_runtime", "cudaLaunchKernel", pid, pid, shift + launch);
    ev.Dur(launch_dur);
    ev.BeginArgs();
    ev.Arg("External id", external);
    ev.Arg("cbid", 211);
    ev.Arg("correlation", correlation);
    ev.End();
    ev.Begin("X", "kernel", name, device, stream, shift + start);
    ev.Dur(end - start);
    ev.BeginArgs();
    ev.Arg("External id", external);
    ev.Arg("queued", 0);
    ev.Arg("device", device);
    ev.Arg("context", 1);
    ev.Arg("stream", stream);
    ev.Arg("correlation", correlation);
    ev.ArgsText(comm_args);
    ev.End();
  }
};

namespace {

// The args of PyTorch's saveNcclMeta for one communication op.
std::string CommArgs(OpType type, Kind kind, std::string_view group_args,
                     size_t group_size, int64_t seq, int32_t peer) {
  const Message m = MessageOf(type, kind, static_cast<int64_t>(group_size));
  std::string a = "\"Collective name\": \"";
  a.append(m.collective).append("\", \"dtype\": \"");
  a.append(IsFloat(type) ? "Float" : "BFloat16");
  a.append("\", \"In msg nelems\": ");
  AppendInt(&a, m.in_nelems);
  a.append(", \"Out msg nelems\": ");
  AppendInt(&a, m.out_nelems);
  a.append(", ").append(group_args);
  a.append(
      ", \"In split size\": \"[]\", \"Out split size\": \"[]\", "
      "\"Seq\": ");
  AppendInt(&a, seq);
  if (kind == Kind::kSend || kind == Kind::kRecv) {
    a.append(kind == Kind::kSend ? ", \"Dst Rank\": " : ", \"Src Rank\": ");
    AppendInt(&a, peer);
  }
  return a;
}

// "Input Dims" of a compute op over `tokens` packed tokens (hidden size
// kHidden), and their types, as torch's record_shapes writes them.
constexpr int64_t kHidden = 4096;
std::string InputDimsArgs(int64_t tokens) {
  std::string a = "\"Input Dims\": [[1, ";
  AppendInt(&a, tokens);
  a.append(", ").append(std::to_string(kHidden));
  a.append("], [").append(std::to_string(kHidden)).append(", ");
  a.append(std::to_string(kHidden)).append("], [");
  a.append(std::to_string(kHidden));
  a.append(
      "]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", "
      "\"c10::BFloat16\"]");
  return a;
}

}  // namespace

void KinetoExport::WriteItem(const Item& it, int32_t rank,
                             std::vector<int64_t>* seq, Sink* sink,
                             KinetoRankStats* stats) const {
  const OpType type = table_->op_type[it.row];
  const Kind kind = KindOf(type);
  const int64_t external = it.op_index + 1;
  if (kind == Kind::kGc) {
    sink->Cpu("python_function", "gc.collect", it.launch, it.cpu_dur,
              "Python id", external, "");
    ++stats->cpu_pauses;
    return;
  }
  ++stats->kernels;
  if (!IsComm(kind)) {
    const int64_t tokens =
        it.row < table_->tokens.size() ? table_->tokens[it.row] : 0;
    // The operator that launches each kernel (its launch slot). That of
    // the microbatch's first kernel has its shapes as record_shapes writes
    // them: activations [1, tokens, hidden] (the microbatch's sequences
    // packed), a weight, a bias.
    const bool shaped = it.piece == 0 && tokens > 0;
    sink->Cpu("cpu_op", ComputeOpName(type, it.piece), it.launch, it.cpu_dur,
              "External id", external, shaped ? InputDimsArgs(tokens) : "");
    ++stats->cpu_ops;
    stats->shaped_ops += shaped;
    sink->Kernel(ComputeKernelName(type, it.piece), kComputeStream, external,
                 it.launch, it.cpu_dur, it.start, it.end, "");
    return;
  }
  // A group's stream on the rank: by its position among the rank's groups.
  const std::vector<int32_t>& groups = member_of_[static_cast<size_t>(rank)];
  const auto at = static_cast<size_t>(
      std::lower_bound(groups.begin(), groups.end(), it.group) -
      groups.begin());
  const Group& g = groups_[static_cast<size_t>(it.group)];
  const std::string args =
      CommArgs(type, kind, g.args, g.ranks.size(), (*seq)[at]++, it.peer);
  sink->Cpu("cpu_op", "record_param_comms", it.launch, it.cpu_dur,
            "External id", external, args);
  // The launch sits inside record_param_comms, never after the kernel's
  // start.
  const int64_t launch =
      it.launch + std::min(it.cpu_dur / 4, it.start - it.launch);
  sink->Kernel(NcclKernelName(kind, IsFloat(type), options_.nccl_names),
               kFirstCommStream + static_cast<int64_t>(at), external, launch,
               it.cpu_dur / 2, it.start, it.end, args);
  ++stats->nccl_kernels;
}

KinetoRankStats KinetoExport::Render(int32_t rank, std::string* out) const {
  const trace::OpsTable& t = *table_;
  const auto r = static_cast<size_t>(rank);
  KinetoRankStats stats;
  const std::vector<Item> items = Items(rank, &stats);
  WriteHeader(rank, out);
  Sink sink{.ev = EventText(out),
            .shift = kKinetoTimeOriginNs + workers_[r].clock_offset_ns,
            .pid = kPidBase + rank,
            .device = workers_[r].device};
  sink.Metadata(items.empty() ? 0 : items.front().launch, member_of_[r].size());
  // External ids: ops 1..n (the kernels of one op share it), then steps.
  auto step_external = static_cast<int64_t>(row_begin_[r + 1] - row_begin_[r]);
  std::vector<int64_t> seq(member_of_[r].size(), 0);
  for (size_t a = 0; a < items.size();) {
    const int64_t step = t.step[items[a].row];
    size_t b = a;
    while (b < items.size() && t.step[items[b].row] == step) ++b;
    // Steps tile the thread when consecutive, as prof.step() calls do.
    const int64_t end = b < items.size() && t.step[items[b].row] == step + 1
                            ? items[b].launch
                            : items[b - 1].launch + items[b - 1].cpu_dur;
    sink.Cpu("user_annotation", "ProfilerStep#" + std::to_string(step),
             items[a].launch, end - items[a].launch, "External id",
             ++step_external, "");
    ++stats.steps;
    for (; a < b; ++a) WriteItem(items[a], rank, &seq, &sink, &stats);
  }
  out->append("\n  ],\n  \"traceName\": \"rank-");
  AppendInt(out, rank);
  out->append(".pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n");
  out->append("  \"baseTimeNanoseconds\": ");
  AppendInt(out, kBaseTimeNanoseconds);
  out->append("\n}\n");
  return stats;
}

Result<std::string> RenderKinetoRank(const trace::OpsTable& table,
                                     const trace::JobMeta& meta, int32_t rank,
                                     const KinetoExportOptions& options) {
  ASSIGN_OR_RETURN(const KinetoExport exported,
                   KinetoExport::Build(table, meta, options));
  if (rank < 0 || static_cast<size_t>(rank) >= exported.workers().size()) {
    return InvalidInput(
        "kineto export: no rank " + std::to_string(rank) + " (the table has " +
        std::to_string(exported.workers().size()) + " workers)");
  }
  std::string out;
  exported.Render(rank, &out);
  return out;
}

std::string RenderKinetoManifest(const KinetoExport& exported,
                                 const std::vector<KinetoRankStats>& stats,
                                 std::string_view file_suffix) {
  const KinetoExportOptions& o = exported.options();
  JsonWriter w;
  w.BeginObject();
  w.FieldString("schema", "strag.kineto-export/1");
  w.FieldString("time_convention",
                "file ts (us) * 1000 = time_origin_ns + ops-table start_ns + "
                "clock_offset_ns");
  w.FieldInt("time_origin_ns", kKinetoTimeOriginNs);
  w.FieldInt("world_size", static_cast<int64_t>(exported.workers().size()));
  w.FieldString("nccl_kernel_names",
                o.nccl_names == NcclKernelNames::kNew ? "new" : "old");
  w.Field("max_clock_offset_ms", o.max_clock_offset_ms);
  w.Key("seed");
  w.Int(static_cast<int64_t>(o.seed));
  w.FieldInt("kernels_per_compute", o.kernels_per_compute);
  w.Key("ranks");
  w.BeginArray();
  for (const KinetoWorker& worker : exported.workers()) {
    w.BeginObject();
    w.FieldInt("rank", worker.rank);
    w.FieldInt("global_rank", worker.global_rank);
    w.FieldInt("dp", worker.dp);
    w.FieldInt("stage", worker.stage);
    w.FieldInt("device", worker.device);
    w.FieldInt("clock_offset_ns", worker.clock_offset_ns);
    w.FieldString("file", "rank-" + std::to_string(worker.rank) +
                              ".pt.trace.json" + std::string(file_suffix));
    const auto r = static_cast<size_t>(worker.rank);
    if (r < stats.size()) {
      w.FieldInt("steps", stats[r].steps);
      w.FieldInt("kernels", stats[r].kernels);
      w.FieldInt("nccl_kernels", stats[r].nccl_kernels);
      w.FieldInt("cpu_pauses", stats[r].cpu_pauses);
      w.FieldInt("skipped_noop_p2p", stats[r].skipped_noop_p2p);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace strag::ingest
