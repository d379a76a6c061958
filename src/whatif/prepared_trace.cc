// SPDX-License-Identifier: Apache-2.0
#include "whatif/prepared_trace.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/parallel_for.h"

namespace strag::whatif {
namespace {

using graph::NodeId;
using trace::OpType;

constexpr float kClampS = static_cast<float>(-0.01);  // values <= this -> 0

float Clamp(float x) { return x <= kClampS ? 0.0f : x; }

// The start of row `r` in binary32 seconds since `origin`, its step's
// earliest start: rebased before any binary32 rounding, whose spacing at an
// epoch of 1.7e9 s is 128 s. A step that starts at 0 exactly (the published
// traces) keeps its binary32 source values bit for bit; any other origin is
// taken off the exact text, so a shifted trace gives the same values.
float RebasedStartS32(const trace::OpsTable& t, size_t r,
                      trace::ExactTime origin) {
  if (!t.has_s32_times()) {  // int64 nanoseconds (simulated tables)
    return static_cast<float>(static_cast<double>(t.start_ns[r] - origin.ns) *
                              1e-9);
  }
  if (t.starts_rebased || origin == trace::ExactTime{}) return t.start_s32[r];
  return trace::SecondsSinceF32(t.ExactStart(r), origin);
}

std::string DescribeInstance(const PreparedTrace& p, size_t step_idx,
                             int32_t dp, int32_t stage) {
  std::string s = "step " + std::to_string(p.steps[step_idx]) + ", dp rank " +
                  std::to_string(dp);
  if (stage >= 0 && !p.worker_rank.empty()) {
    const int32_t r = p.worker_rank[static_cast<size_t>(dp * p.pp + stage)];
    if (r >= 0) s += " (rank " + std::to_string(r) + ")";
  }
  return s;
}

// The maximal runs of consecutive rows of one step and worker (equal step,
// dp rank, stage and global rank) with their keys. Ops CSVs list a worker's
// ops of a step together: millions of rows make thousands of runs, and the
// passes over the keys go over the runs instead (a row's checks give what
// its run gives). Found by parts of the rows on `threads` threads, joined
// in order; a table read with its keys in runs (OpsTable::keys_in_runs)
// has them already (the same runs: its reader merges equal neighbours).
// Otherwise the keys are read from the table's columns at each run's first
// row (4 bytes per run here, where rows in no order make a run per row):
// those columns must stay while they are read (PrepareTraceReleasing drops
// `rank` before placing, which reads none).
class RunKeys {
 public:
  RunKeys(const trace::OpsTable& t, size_t threads) : t_(&t) {
    if (t.keys_in_runs) {
      runs_ = &t.key_runs;
      return;
    }
    const size_t parts = std::max<size_t>(1, std::min(threads, t.size() >> 12));
    std::vector<std::vector<uint32_t>> found(parts);
    ParallelFor(parts, threads, [&](size_t k, size_t /*worker*/) {
      for (size_t r = t.size() * k / parts; r < t.size() * (k + 1) / parts;
           ++r) {
        if (r == 0 || t.step[r] != t.step[r - 1] || t.dp[r] != t.dp[r - 1] ||
            t.pp[r] != t.pp[r - 1] || t.rank[r] != t.rank[r - 1]) {
          found[k].push_back(static_cast<uint32_t>(r));
        }
      }
    });
    for (const std::vector<uint32_t>& f : found) {
      first_.insert(first_.end(), f.begin(), f.end());
    }
    first_.push_back(static_cast<uint32_t>(t.size()));
  }

  size_t size() const { return runs_ ? runs_->size() : first_.size() - 1; }
  // Run k is rows [first(k), first(k + 1)).
  size_t first(size_t k) const { return runs_ ? runs_->first[k] : first_[k]; }
  int32_t rank(size_t k) const {
    return runs_ ? runs_->rank[k] : t_->rank[first_[k]];
  }
  int32_t dp(size_t k) const {
    return runs_ ? runs_->dp[k] : t_->dp[first_[k]];
  }
  int32_t pp(size_t k) const {
    return runs_ ? runs_->pp[k] : t_->pp[first_[k]];
  }
  int64_t step(size_t k) const {
    return runs_ ? runs_->step[k] : t_->step[first_[k]];
  }

 private:
  const trace::OpsTable* t_;
  const trace::KeyRuns* runs_ = nullptr;  // the table's, where it has them
  std::vector<uint32_t> first_;           // else the runs' first rows
};

// Row indices are 32-bit (PreparedTrace::row, RunKeys).
Status CheckOpCount(const trace::OpsTable& t) {
  if (t.size() >= std::numeric_limits<uint32_t>::max()) {
    return InvalidInput("the trace has " + std::to_string(t.size()) +
                        " ops; at most 4294967294 are supported");
  }
  return Status::Ok();
}

Status DeriveShape(const trace::OpsTable& t, const RunKeys& keys,
                   PreparedTrace* p) {
  if (t.size() == 0) return InvalidInput("the trace has no ops");
  int64_t dp = 0, pp = 0;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys.dp(k) < 0 || keys.pp(k) < 0) {
      return InvalidInput("rank " + std::to_string(keys.rank(k)) +
                          ": negative dp rank or stage");
    }
    dp = std::max<int64_t>(dp, int64_t{keys.dp(k)} + 1);
    pp = std::max<int64_t>(pp, int64_t{keys.pp(k)} + 1);
  }
  // Every (dp rank, stage) needs ops, so a larger layout is bad input (and
  // must not be allocated).
  if (dp * pp > static_cast<int64_t>(t.size())) {
    return InvalidInput("the trace has dp ranks up to " +
                        std::to_string(dp - 1) + " and stages up to " +
                        std::to_string(pp - 1) + " but only " +
                        std::to_string(t.size()) +
                        " ops: most (dp rank, stage) "
                        "workers would have none");
  }
  p->dp = static_cast<int32_t>(dp);
  p->pp = static_cast<int32_t>(pp);
  for (size_t k = 0; k < keys.size(); ++k) {
    const int64_t step = keys.step(k);
    if (p->steps.empty() || p->steps.back() != step) p->steps.push_back(step);
  }
  std::sort(p->steps.begin(), p->steps.end());
  p->steps.erase(std::unique(p->steps.begin(), p->steps.end()), p->steps.end());
  p->worker_rank.assign(static_cast<size_t>(p->dp * p->pp), -1);
  for (size_t k = 0; k < keys.size(); ++k) {
    int32_t& w =
        p->worker_rank[static_cast<size_t>(keys.dp(k) * p->pp + keys.pp(k))];
    if (w >= 0 && w != keys.rank(k)) {
      return InvalidInput("dp rank " + std::to_string(keys.dp(k)) + ", stage " +
                          std::to_string(keys.pp(k)) +
                          " has two global ranks (" + std::to_string(w) +
                          " and " + std::to_string(keys.rank(k)) + ")");
    }
    w = keys.rank(k);
  }
  for (int32_t d = 0; d < p->dp; ++d) {
    for (int32_t s = 0; s < p->pp; ++s) {
      const int32_t r = p->worker_rank[static_cast<size_t>(d * p->pp + s)];
      if (r < 0) {
        return InvalidInput("no ops for dp rank " + std::to_string(d) +
                            ", stage " + std::to_string(s));
      }
      p->workers.push_back(Worker{r, d, s});
    }
  }
  std::sort(p->workers.begin(), p->workers.end(),
            [](const Worker& a, const Worker& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < p->workers.size(); ++i) {
    if (p->workers[i].rank == p->workers[i - 1].rank) {
      return InvalidInput("global rank " + std::to_string(p->workers[i].rank) +
                          " appears at two (dp rank, stage) positions");
    }
  }
  p->topology.dp = p->dp;
  p->topology.pp = p->pp;
  p->topology.source = "ops CSV columns";
  p->topology.known = true;
  for (const Worker& w : p->workers) {
    p->topology.places.push_back(trace::RankPlace{w.rank, w.dp, w.pp, 0, 0, 0});
  }
  return Status::Ok();
}

Status BuildModel(const trace::OpsTable& t, const RunKeys& keys,
                  const trace::JobMeta& meta, PreparedTrace* p) {
  const int64_t ref_step = p->steps.front();
  std::optional<trace::ExactTime> origin;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys.step(k) != ref_step) continue;
    for (size_t r = keys.first(k); r < keys.first(k + 1); ++r) {
      if (!origin || t.ExactStart(r) < *origin) origin = t.ExactStart(r);
    }
  }
  std::vector<graph::RefOp> ref;
  const bool ovlp_dp =
      std::find(t.op_type.begin(), t.op_type.end(),
                OpType::kSeparateGradsAllReduce) != t.op_type.end();
  for (size_t k = 0; k < keys.size(); ++k) {
    if (keys.dp(k) != 0 || keys.step(k) != ref_step) continue;
    for (size_t r = keys.first(k); r < keys.first(k + 1); ++r) {
      const float start = RebasedStartS32(t, r, *origin);
      ref.push_back(graph::RefOp{
          .key = {t.op_type[r], t.seq_id[r], keys.pp(k)},
          .chunk = t.chunk[r],
          .global_chunk = t.global_chunk[r],
          .start = start,
          .end = start + t.DurS32(r),  // binary32 addition
      });
    }
  }
  for (const graph::RefOp& op : ref) {
    // Ids index per-stage tables: bound them by the instance's size.
    const auto limit =
        static_cast<int32_t>(std::min<size_t>(ref.size(), 1 << 30));
    if (op.key.seq_id >= limit || op.chunk >= limit) {
      return InvalidInput(
          "step " + std::to_string(ref_step) + ", dp rank 0: " +
          graph::DescribeOpKey(op.key) + " (chunk " + std::to_string(op.chunk) +
          "): seq_id and mc must be below the number of ops of the instance (" +
          std::to_string(ref.size()) + ")");
    }
    p->vpp = std::max(p->vpp, op.chunk + 1);
  }
  const bool use_dp = int64_t{p->dp} * std::max(meta.cp, 1) > 1;
  for (const graph::RefOp& op : ref) {
    if (!use_dp && (op.key.type == OpType::kParamsAllGather ||
                    op.key.type == OpType::kGradsReduceScatter)) {
      return InvalidInput(
          "the trace has " + std::string(trace::OpTypeName(op.key.type)) +
          " ops but one DP rank and cp (dsp_size) 1, so there is no DP group "
          "to synchronise: give the context-parallel size with --cp or "
          "dsp_size in the metadata");
    }
  }
  const graph::MegatronOptions options{
      .pp = p->pp,
      .vpp = p->vpp,
      .use_dp = use_dp,
      .ovlp_dp = ovlp_dp,
  };
  auto model = graph::BuildMegatronModel(ref, options);
  if (!model.ok()) {
    std::string where = "reference instance (step " + std::to_string(ref_step) +
                        ", dp rank 0; global rank "
                        "of stage";
    for (int32_t s = 0; s < p->pp && s < 16; ++s) {
      where += (s ? ", " : " ") + std::to_string(s) + ": " +
               std::to_string(p->worker_rank[static_cast<size_t>(s)]);
    }
    return model.status().WithContext(where + (p->pp > 16 ? ", ...)" : ")"));
  }
  p->model = std::move(model).value();
  return Status::Ok();
}

// PrepareShape of `t`, whose keys are `keys`.
Result<PreparedTrace> PrepareShapeOfRuns(const trace::OpsTable& t,
                                         const RunKeys& keys,
                                         const trace::JobMeta& meta) {
  PreparedTrace p;
  RETURN_IF_ERROR(DeriveShape(t, keys, &p));
  RETURN_IF_ERROR(BuildModel(t, keys, meta, &p));
  return p;
}

// The steps [first, last) of a job: what one thread prepares.
struct StepRange {
  size_t first = 0, last = 0;
};

// Step ranges per thread where they are handed out as threads come free.
constexpr size_t kRangesPerThread = 4;

// The step ranges of `threads` threads (one, or one per thread with at
// least a step each).
std::vector<StepRange> SplitSteps(size_t steps, size_t threads) {
  const size_t n = std::max<size_t>(1, std::min(threads, steps));
  std::vector<StepRange> out;
  for (size_t k = 0; k < n; ++k) {
    out.push_back({steps * k / n, steps * (k + 1) / n});
  }
  return out;
}

// Where PlaceRowsOfSteps stopped: the first bad row (in row order) and why.
struct RowError {
  size_t row = std::numeric_limits<size_t>::max();
  Status status = Status::Ok();
};

// Before every start: where a step's earliest start is sought from.
constexpr trace::ExactTime kNoStart{.ns = std::numeric_limits<int64_t>::max()};

// Row `r` of step `step_idx` at `slot`: its binary32 start since the
// step's origin, end = fl32(start + dur) and duration; `step_min` is the
// step's earliest start so far.
void PlaceRow(const trace::OpsTable& t, size_t r, size_t slot,
              trace::ExactTime origin, PreparedTrace* p, BigVector<float>* end,
              float* step_min) {
  p->row[slot] = static_cast<uint32_t>(r);
  const float start = RebasedStartS32(t, r, origin);
  const float dur = t.DurS32(r);
  p->start[slot] = start;
  (*end)[slot] = start + dur;  // binary32 addition
  p->cost[slot] = dur;
  *step_min = std::min(*step_min, start);
}

// PlaceRows for the rows of the steps in `range` (the arrays are
// allocated): every row of those steps at its (node, instance) slot, each
// slot at most once, with its binary32 start, end = fl32(start + dur) and
// duration; `step_min` gets the earliest start of each of those steps.
// Rows of other steps are skipped, so threads with disjoint ranges write
// disjoint slots and steps.
RowError PlaceRowsOfSteps(const trace::OpsTable& t, const RunKeys& keys,
                          StepRange range, PreparedTrace* p,
                          BigVector<float>* end, std::vector<float>* step_min) {
  constexpr uint32_t kEmpty = std::numeric_limits<uint32_t>::max();
  auto step_index = [&](size_t k, size_t hint) {
    if (p->steps[hint] == keys.step(k)) return hint;  // runs come by step
    return static_cast<size_t>(
        std::lower_bound(p->steps.begin(), p->steps.end(), keys.step(k)) -
        p->steps.begin());
  };
  const auto mine = [range](size_t k) {
    return k >= range.first && k < range.last;
  };
  // (Rebased starts need no origin: RebasedStartS32 takes them as they are.)
  std::vector<trace::ExactTime> origin(p->steps.size(), kNoStart);
  for (size_t k = 0, s = 0; k < keys.size() && !t.starts_rebased; ++k) {
    s = step_index(k, s);
    if (!mine(s)) continue;
    for (size_t r = keys.first(k); r < keys.first(k + 1); ++r) {
      origin[s] = std::min(origin[s], t.ExactStart(r));
    }
  }
  size_t step_idx = 0;
  for (size_t k = 0; k < keys.size(); ++k) {
    step_idx = step_index(k, step_idx);
    if (!mine(step_idx)) continue;
    const int32_t dp = keys.dp(k);
    for (size_t r = keys.first(k); r < keys.first(k + 1); ++r) {
      const graph::OpKey key{t.op_type[r], t.seq_id[r], keys.pp(k)};
      const int64_t v = p->model.index.Find(key);
      if (v < 0) {
        return {
            r, InvalidInput(DescribeInstance(*p, step_idx, dp, key.stage) +
                            ": " + graph::DescribeOpKey(key) +
                            " is not in the reference instance (step " +
                            std::to_string(p->steps.front()) + ", dp rank 0)")};
      }
      const size_t slot = p->Slot(
          static_cast<NodeId>(v),
          step_idx * static_cast<size_t>(p->dp) + static_cast<size_t>(dp));
      if (p->row[slot] != kEmpty) {
        return {r, InvalidInput(DescribeInstance(*p, step_idx, dp, key.stage) +
                                ": " + graph::DescribeOpKey(key) +
                                " appears twice")};
      }
      PlaceRow(t, r, slot, origin[step_idx], p, end, &(*step_min)[step_idx]);
    }
  }
  return {};
}

// A run (RunKeys) with what placing it needs.
struct RowRun {
  size_t first = 0, last = 0;  // rows [first, last)
  size_t step_idx = 0;         // index in PreparedTrace::steps
  int32_t dp = 0, pp = 0;
};

// The runs of `t` from their starts, in row order; nullopt when there are
// more than one per 16 rows (rows out of order), where sorting them would
// cost more than it saves.
std::optional<std::vector<RowRun>> PlacedRuns(
    const trace::OpsTable& t, const RunKeys& keys,
    const std::vector<int64_t>& steps) {
  if (keys.size() > std::max<size_t>(1024, t.size() / 16)) {
    return std::nullopt;
  }
  std::vector<RowRun> runs;
  for (size_t k = 0; k < keys.size(); ++k) {
    runs.push_back(
        RowRun{.first = keys.first(k),
               .last = keys.first(k + 1),
               .step_idx = static_cast<size_t>(
                   std::lower_bound(steps.begin(), steps.end(), keys.step(k)) -
                   steps.begin()),
               .dp = keys.dp(k),
               .pp = keys.pp(k)});
  }
  return runs;
}

// PlaceRowsOfSteps in the order of the slots (slot = node * instances +
// instance): the runs of the steps in `range` stage by stage, instance by
// instance, so that consecutive runs write the same cache lines of the
// four arrays, where rows in their order (a worker's steps one after the
// other) would miss a line of each array per row. Every row lands where
// the row-order pass puts it, with the same values; false when an op is not
// in the reference instance, whose first error in row order the row-order
// pass then finds. A slot is not checked before it is written (the load
// of a line about to be written was most of the time): two rows of one
// slot leave another slot empty when there are as many rows as slots,
// which PlaceRows then finds.
bool PlaceRunsOfSteps(const trace::OpsTable& t, const std::vector<RowRun>& runs,
                      StepRange range, PreparedTrace* p, BigVector<float>* end,
                      std::vector<float>* step_min) {
  std::vector<const RowRun*> order;
  for (const RowRun& run : runs) {
    if (run.step_idx >= range.first && run.step_idx < range.last) {
      order.push_back(&run);
    }
  }
  std::sort(order.begin(), order.end(), [](const RowRun* a, const RowRun* b) {
    if (a->pp != b->pp) return a->pp < b->pp;
    if (a->step_idx != b->step_idx) return a->step_idx < b->step_idx;
    if (a->dp != b->dp) return a->dp < b->dp;
    return a->first < b->first;
  });
  std::vector<trace::ExactTime> origin(p->steps.size(), kNoStart);
  for (const RowRun* run : order) {
    if (t.starts_rebased) break;  // RebasedStartS32 takes them as they are
    trace::ExactTime& o = origin[run->step_idx];
    for (size_t r = run->first; r < run->last; ++r) {
      o = std::min(o, t.ExactStart(r));
    }
  }
  for (const RowRun* run : order) {
    const size_t instance = run->step_idx * static_cast<size_t>(p->dp) +
                            static_cast<size_t>(run->dp);
    float* const m = &(*step_min)[run->step_idx];
    // The last instance of a line of `cost` (8 per line; 16 of the others)
    // fetches the next instance's lines, which the next runs write.
    const bool fetch_next = instance % 8 == 7;
    for (size_t r = run->first; r < run->last; ++r) {
      const int64_t v =
          p->model.index.Find({t.op_type[r], t.seq_id[r], run->pp});
      if (v < 0) return false;
      const size_t slot = p->Slot(static_cast<NodeId>(v), instance);
      if (fetch_next && slot + 1 < p->row.size()) {
        __builtin_prefetch(&p->row[slot + 1], 1);
        __builtin_prefetch(&p->start[slot + 1], 1);
        __builtin_prefetch(&p->cost[slot + 1], 1);
        __builtin_prefetch(&(*end)[slot + 1], 1);
      }
      PlaceRow(t, r, slot, origin[run->step_idx], p, end, m);
    }
  }
  return true;
}

// Places every row at its (node, instance) slot, each slot exactly once
// (PlaceRowsOfSteps on `threads` threads, a range of steps each); the
// error, if any, is the one a pass over the rows in order finds first.
Status PlaceRows(const trace::OpsTable& t, const RunKeys& keys,
                 PreparedTrace* p, BigVector<float>* end,
                 std::vector<float>* step_min, size_t threads) {
  const size_t instances = p->num_instances();
  constexpr uint32_t kEmpty = std::numeric_limits<uint32_t>::max();
  // Each instance holds every op of the reference instance exactly once; a
  // mismatch is reported below with the instance, but a wildly larger layout
  // must not be allocated first.
  const size_t slots = p->num_nodes() * instances;
  if (slots > 2 * t.size() + (size_t{1} << 20)) {
    return InvalidInput("the trace has " + std::to_string(t.size()) +
                        " ops but " + std::to_string(p->steps.size()) +
                        " steps x " + std::to_string(p->dp) + " dp ranks x " +
                        std::to_string(p->num_nodes()) +
                        " ops of the reference instance would need " +
                        std::to_string(slots) + ": most steps lack most ops");
  }
  // The arrays' first touch (the kernel clearing their pages, then the
  // fill) side by side: ~60 ms on one thread for trace-AR x64.
  ParallelFor(4, threads, [&](size_t k, size_t /*worker*/) {
    if (k == 0) p->row.assign(slots, kEmpty);
    if (k == 1) p->start.resize(slots);
    if (k == 2) p->cost.resize(slots);
    if (k == 3) end->resize(slots);
  });
  step_min->assign(p->steps.size(), std::numeric_limits<float>::infinity());
  const std::vector<StepRange> ranges = SplitSteps(p->steps.size(), threads);
  const auto first_empty = [p] {
    return static_cast<size_t>(std::find(p->row.begin(), p->row.end(),
                                         std::numeric_limits<uint32_t>::max()) -
                               p->row.begin());
  };
  // Run by run when there are as many rows as slots (else some slot is
  // empty or taken twice, and the row-order pass says which comes first).
  std::optional<std::vector<RowRun>> runs;
  if (t.size() == slots) runs = PlacedRuns(t, keys, p->steps);
  if (runs) {
    // Ranges of steps handed out as threads come free (4 per thread): with
    // one each, one thread was left placing alone for a quarter of the time.
    const std::vector<StepRange> parts =
        SplitSteps(p->steps.size(), kRangesPerThread * threads);
    std::vector<char> ok(parts.size());
    ParallelFor(parts.size(), threads, [&](size_t k, size_t /*w*/) {
      ok[k] = PlaceRunsOfSteps(t, *runs, parts[k], p, end, step_min);
    });
    if (std::all_of(ok.begin(), ok.end(), [](char b) { return b != 0; }) &&
        first_empty() == slots) {
      return Status::Ok();
    }
    p->row.assign(slots, kEmpty);
    step_min->assign(p->steps.size(), std::numeric_limits<float>::infinity());
  }
  std::vector<RowError> errors(ranges.size());
  ParallelFor(ranges.size(), ranges.size(), [&](size_t k, size_t /*w*/) {
    errors[k] = PlaceRowsOfSteps(t, keys, ranges[k], p, end, step_min);
  });
  const auto first = std::min_element(
      errors.begin(), errors.end(),
      [](const RowError& a, const RowError& b) { return a.row < b.row; });
  if (!first->status.ok()) return first->status;
  if (const size_t slot = first_empty(); slot < slots) {
    const auto v = static_cast<NodeId>(slot / instances);
    const size_t inst = slot % instances;
    const graph::OpKey& key = p->model.keys[v];
    return InvalidInput(DescribeInstance(*p, inst / static_cast<size_t>(p->dp),
                                         static_cast<int32_t>(
                                             inst % static_cast<size_t>(p->dp)),
                                         key.stage) +
                        ": " + graph::DescribeOpKey(key) +
                        " is missing (every DP rank of "
                        "every step needs the ops of the reference instance)");
  }
  return Status::Ok();
}

// PreprocessTraced for the instances of the steps in `range`.
void PreprocessSteps(const BigVector<float>& end,
                     const std::vector<float>& step_min, StepRange range,
                     PreparedTrace* p) {
  const size_t n = p->num_nodes();
  const auto dp = static_cast<size_t>(p->dp);
  const size_t i_first = range.first * dp, i_last = range.last * dp;
  const graph::DepGraph& g = p->model.graph;
  // A node's instances of the range lie side by side (Slot(v, i) = v *
  // instances + i): each pass below runs along them, the latest end of the
  // dependencies taken one dependency at a time (the same max in the same
  // order per instance as one instance at a time, so the same values).
  std::vector<float> ready(i_last - i_first);
  for (NodeId v = 0; v < n; ++v) {
    if (g.num_deps(v) == 0) {
      for (size_t s = range.first; s < range.last; ++s) {
        std::fill_n(
            ready.begin() + static_cast<ptrdiff_t>((s - range.first) * dp), dp,
            step_min[s]);
      }
    } else {
      std::fill(ready.begin(), ready.end(),
                -std::numeric_limits<float>::infinity());
      for (const uint32_t* u = g.dep_begin(v); u != g.dep_end(v); ++u) {
        const float* dep_end = &end[p->Slot(*u, i_first)];
        for (size_t k = 0; k < ready.size(); ++k) {
          ready[k] = std::max(ready[k], dep_end[k]);
        }
      }
    }
    const size_t first = p->Slot(v, i_first);
    for (size_t k = 0; k < ready.size(); ++k) {
      p->launch_delay[first + k] = Clamp(p->start[first + k] - ready[k]);
    }
  }
  std::vector<float> group_start(dp);
  for (const graph::CommGroup& group : g.groups()) {
    for (size_t i0 = i_first; i0 < i_last; i0 += dp) {  // one step at a time
      // Latest start of the group's members per instance of the step.
      for (size_t d = 0; d < dp; ++d) {
        float gs = -std::numeric_limits<float>::infinity();
        for (NodeId m : group.members)
          gs = std::max(gs, p->start[p->Slot(m, i0 + d)]);
        group_start[d] = gs;
      }
      if (group.dp_sync) {
        const float all =
            *std::max_element(group_start.begin(), group_start.end());
        std::fill(group_start.begin(), group_start.end(), all);
      }
      for (size_t d = 0; d < dp; ++d) {
        for (NodeId m : group.members) {
          const size_t slot = p->Slot(m, i0 + d);
          p->cost[slot] = Clamp(end[slot] - group_start[d]);
        }
      }
    }
  }
  // Rebase every step to start at 0 (a no-op for step-relative traces).
  for (NodeId v = 0; v < n; ++v) {
    for (size_t s = range.first; s < range.last; ++s) {
      const float m = step_min[s];
      float hi = p->step_t_base[s];
      const size_t first = p->Slot(v, s * dp);
      for (size_t slot = first; slot < first + dp; ++slot) {
        p->start[slot] = p->start[slot] - m;
        hi = std::max(hi, end[slot] - m);
      }
      p->step_t_base[s] = hi;
    }
  }
}

#if STRAG_AVX2_CLONES
// The same compiled for AVX2 (base/cpu_features.h): maxima and
// differences of floats only, so the same bits.
STRAG_AVX2_FLATTEN void PreprocessStepsAvx2(const BigVector<float>& end,
                                            const std::vector<float>& step_min,
                                            StepRange range, PreparedTrace* p) {
  PreprocessSteps(end, step_min, range, p);
}
#endif

}  // namespace

void PreprocessTraced(const BigVector<float>& end,
                      const std::vector<float>& step_min, PreparedTrace* p,
                      size_t threads) {
  p->launch_delay.resize(p->num_nodes() * p->num_instances());
  // max end - min start per step (= 0 after the rebase)
  p->step_t_base.assign(p->steps.size(),
                        -std::numeric_limits<float>::infinity());
  const std::vector<StepRange> ranges =
      SplitSteps(p->steps.size(), kRangesPerThread * threads);
  ParallelFor(ranges.size(), threads, [&](size_t k, size_t /*worker*/) {
#if STRAG_AVX2_CLONES
    if (CpuHasAvx2()) {
      PreprocessStepsAvx2(end, step_min, ranges[k], p);
      return;
    }
#endif
    PreprocessSteps(end, step_min, ranges[k], p);
  });
}

std::string WorkerLabel(Layout layout, int32_t rank, int32_t dp, int32_t pp) {
  std::string label = "rank " + std::to_string(rank);
  if (layout == Layout::kMegatron) {
    label +=
        " (dp " + std::to_string(dp) + ", stage " + std::to_string(pp) + ")";
  }
  return label;
}

namespace {

// Each step's binary32 starts since its earliest start (RebasedStartS32 of
// every row, the same values placing computes) into `start_s32`, so that
// the exact starts can go before the slot arrays come: 12 bytes per op.
// Published traces start every step at 0 exactly: nothing is written.
void RebaseStartsInPlace(const RunKeys& keys, const std::vector<int64_t>& steps,
                         trace::OpsTable* t) {
  std::vector<trace::ExactTime> origin(steps.size(), kNoStart);
  std::vector<size_t> step_of(keys.size());
  for (size_t k = 0, s = 0; k < keys.size(); ++k) {
    if (steps[s] != keys.step(k)) {
      s = static_cast<size_t>(
          std::lower_bound(steps.begin(), steps.end(), keys.step(k)) -
          steps.begin());
    }
    step_of[k] = s;
    for (size_t r = keys.first(k); r < keys.first(k + 1); ++r) {
      origin[s] = std::min(origin[s], t->ExactStart(r));
    }
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    const trace::ExactTime o = origin[step_of[k]];
    if (o == trace::ExactTime{}) continue;
    for (size_t r = keys.first(k); r < keys.first(k + 1); ++r) {
      t->start_s32[r] = RebasedStartS32(*t, r, o);
    }
  }
  t->starts_rebased = true;
}

// PrepareTrace, calling `after_shape` once the shape is built (before the
// slot arrays are allocated) and `after_placing` once every row is placed
// (before the launch delays are).
Result<PreparedTrace> PrepareWhole(
    const trace::OpsTable& table, const trace::JobMeta& meta, size_t threads,
    const std::function<void(const RunKeys&, const PreparedTrace&)>&
        after_shape,
    const std::function<void()>& after_placing) {
  if (threads == 0) threads = HardwareThreads();
  RETURN_IF_ERROR(CheckOpCount(table));
  const RunKeys keys(table, threads);
  ASSIGN_OR_RETURN(PreparedTrace p, PrepareShapeOfRuns(table, keys, meta));
  after_shape(keys, p);
  BigVector<float> end;
  std::vector<float> step_min;
  RETURN_IF_ERROR(PlaceRows(table, keys, &p, &end, &step_min, threads));
  after_placing();
  PreprocessTraced(end, step_min, &p, threads);
  return p;
}

}  // namespace

Result<PreparedTrace> PrepareTrace(const trace::OpsTable& table,
                                   const trace::JobMeta& meta, size_t threads) {
  return PrepareWhole(
      table, meta, threads, [](const RunKeys&, const PreparedTrace&) {}, [] {});
}

Result<PreparedTrace> PrepareTraceReleasing(trace::OpsTable* table,
                                            const trace::JobMeta& meta,
                                            size_t threads) {
  trace::OpsTable& t = *table;
  const auto release = [](auto& column) {
    std::decay_t<decltype(column)>().swap(column);
  };
  // Placing reads the keys, steps, workers' coordinates and binary32 times:
  // the rest goes before the slot arrays come, the exact starts too once
  // each step's binary32 starts are rebased in place; then all but what the
  // sequence lengths read (microbatches, extra columns) before the launch
  // delays come. trace-AR x16's peak: 133 -> 125 -> 81 MB (with keys by
  // runs).
  return PrepareWhole(
      t, meta, threads,
      [&](const RunKeys& keys, const PreparedTrace& p) {
        release(t.rank), release(t.chunk), release(t.global_chunk);
        release(t.tp), release(t.cp), release(t.tokens);
        if (t.has_s32_times()) release(t.dur_ns);
        if (t.extra.empty()) release(t.microbatch);  // (sequence lengths)
        if (t.has_s32_times()) {
          RebaseStartsInPlace(keys, p.steps, &t);
          release(t.start_ns), release(t.start_rem_as);
        }
      },
      [&] {
        release(t.dp), release(t.pp), release(t.step), release(t.op_type);
        release(t.seq_id), release(t.start_ns), release(t.start_rem_as);
        release(t.start_s32), release(t.dur_s32), release(t.dur_ns);
      });
}

Result<PreparedTrace> PrepareShape(const trace::OpsTable& table,
                                   const trace::JobMeta& meta) {
  RETURN_IF_ERROR(CheckOpCount(table));
  return PrepareShapeOfRuns(table, RunKeys(table, 1), meta);
}

Result<PreparedTrace> PrepareWindow(const PreparedTrace& shape,
                                    const trace::OpsTable& rows,
                                    size_t first_step, size_t count) {
  PreparedTrace w;
  w.layout = shape.layout;
  w.model = shape.model;
  w.dp = shape.dp;
  w.pp = shape.pp;
  w.vpp = shape.vpp;
  w.workers = shape.workers;
  w.worker_rank = shape.worker_rank;
  w.topology = shape.topology;
  const auto from = shape.steps.begin() + static_cast<ptrdiff_t>(first_step);
  w.steps.assign(from, from + static_cast<ptrdiff_t>(count));
  RETURN_IF_ERROR(CheckOpCount(rows));
  const RunKeys keys(rows, 1);
  for (size_t k = 0; k < keys.size(); ++k) {
    const int64_t step = keys.step(k);
    if (!std::binary_search(w.steps.begin(), w.steps.end(), step)) {
      return InvalidInput("step " + std::to_string(step) +
                          ": a row outside its window of steps");
    }
  }
  BigVector<float> end;
  std::vector<float> step_min;
  RETURN_IF_ERROR(PlaceRows(rows, keys, &w, &end, &step_min, 1));
  PreprocessTraced(end, step_min, &w, 1);
  return w;
}

}  // namespace strag::whatif
