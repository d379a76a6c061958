// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/generic_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/median.h"
#include "graph/generic/collective_matching.h"
#include "graph/generic/generic_graph.h"
#include "graph/generic/group_catalog.h"
#include "graph/generic/segments.h"
#include "graph/generic/step_split.h"
#include "graph/generic/step_structure.h"
#include "graph/generic/warning_log.h"

namespace strag::graph {
namespace {

// One step present on every rank: its nodes and matching.
struct StepData {
  int64_t id = 0;
  std::vector<std::vector<LocalNode>> nodes;  // per rank index
  std::vector<MatchedComm> matching;
  bool complete = true;  // every rank has nodes, every comm every member
  std::vector<LocalSegmentOps> ops;  // per rank index (keep_segment_ops)
};

Status CheckColumns(const trace::RankTrace& t) {
  const size_t n = t.start_ns.size();
  if (t.dur_ns.size() != n || t.launch_ns.size() != n || t.stream.size() != n ||
      t.comm.size() != n || t.name.size() != n) {
    return InvalidInput(t.source + ": op columns of unequal length");
  }
  if (t.rank < 0) return InvalidInput(t.source + ": the rank is unknown");
  return Status::Ok();
}

// Ranks whose clocks could not be aligned with rank index 0's.
std::vector<std::string> ClockWarnings(const ClockAlignment& a,
                                       const std::vector<int32_t>& ranks) {
  std::vector<std::string> out;
  if (ranks.size() < 2) return out;
  std::map<int32_t, std::vector<int32_t>> by_anchor;  // -> global ranks
  for (size_t r = 0; r < ranks.size(); ++r) {
    by_anchor[a.anchor[r]].push_back(ranks[r]);
  }
  for (const auto& [anchor, members] : by_anchor) {
    if (anchor < 0) {
      out.push_back("rank " + FormatRanks(members) +
                    ": no matched collective with another rank; clock not "
                    "aligned (offset 0)");
    } else if (anchor != 0) {
      out.push_back(
          "rank " + FormatRanks(members) +
          ": no matched collective with rank " + std::to_string(ranks[0]) +
          "'s ranks; clocks aligned among themselves only (rank " +
          std::to_string(ranks[static_cast<size_t>(anchor)]) + " at offset 0)");
    }
  }
  if (!a.converged) {
    out.push_back("clock alignment did not converge in " +
                  std::to_string(a.iterations) + " rounds (last change " +
                  std::to_string(a.last_change_ns) + " ns)");
  }
  return out;
}

class Builder {
 public:
  Builder(std::span<const trace::RankTrace> traces,
          const GenericOptions& options)
      : input_(traces),
        options_(options),
        log_(options.max_warnings_per_kind) {}

  Result<GenericModel> Build();

 private:
  Status PrepareRanks();
  void AddRank(const trace::RankTrace* t);
  Status CollectSteps();
  StepData MakeStep(int64_t id, const std::vector<size_t>& span_of_rank);
  void ChooseReference();
  void DropDifferentSteps();
  void WarnIncomplete();
  void WarnComm(const MatchedComm& m, std::set<std::string>* absent_told);
  void Align();
  void FillTimes();
  void KeepSegmentOps();
  void CheckOtherSteps();
  std::string RankName(size_t r) const {
    return "rank " + std::to_string(model_.ranks[r]);
  }

  std::span<const trace::RankTrace> input_;
  GenericOptions options_;
  WarningLog log_;
  GenericModel model_;
  std::vector<const trace::RankTrace*> traces_;  // per rank index
  std::vector<RankSteps> split_;                 // per rank index
  GroupCatalog catalog_;
  std::vector<StepData> steps_;  // present on every rank, by id
  size_t ref_ = 0;               // index into steps_
  std::vector<size_t> kept_;     // indices into steps_, by id
};

// The traces ordered by rank; fails on what cannot be used at all.
Result<std::vector<const trace::RankTrace*>> SortedTraces(
    std::span<const trace::RankTrace> input) {
  if (input.empty()) return InvalidInput("no traces");
  std::vector<const trace::RankTrace*> sorted;
  for (const trace::RankTrace& t : input) {
    RETURN_IF_ERROR(CheckColumns(t));
    sorted.push_back(&t);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return a->rank < b->rank; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->rank == sorted[i - 1]->rank) {
      return InvalidInput(sorted[i - 1]->source + " and " + sorted[i]->source +
                          " both claim rank " +
                          std::to_string(sorted[i]->rank));
    }
  }
  return sorted;
}

// Splits a rank into steps, counting and naming what is dropped; a rank
// without any op in a step is left out of the model.
void Builder::AddRank(const trace::RankTrace* t) {
  RankSteps s = SplitSteps(*t);
  GenericCounters& c = model_.counters;
  c.ops_outside_steps += s.outside;
  c.ops_invalid += s.invalid;
  const std::string who =
      "rank " + std::to_string(t->rank) + " (" + t->source + ")";
  // Ops outside every ProfilerStep (before the first, after the last) are
  // normal: counted (counters.ops_outside_steps), not warned about.
  if (s.invalid > 0) {
    log_.Add("invalid-ops", who + ": " + std::to_string(s.invalid) +
                                " ops with a negative duration or an "
                                "unknown collective (dropped)");
  }
  if (s.duplicate_spans > 0) {
    log_.Add("duplicate-steps",
             who + ": " + std::to_string(s.duplicate_spans) +
                 " ProfilerStep spans repeat an id (ignored)");
  }
  if (std::all_of(s.rows.begin(), s.rows.end(),
                  [](const auto& rows) { return rows.empty(); })) {
    ++c.ranks_without_steps;
    log_.Add("rank-without-steps",
             who + ": no op inside a ProfilerStep span (" +
                 std::to_string(t->steps.size()) + " spans, " +
                 std::to_string(t->size()) + " ops): left out of the model");
    return;
  }
  traces_.push_back(t);
  model_.ranks.push_back(t->rank);
  model_.sources.push_back(t->source);
  split_.push_back(std::move(s));
}

Status Builder::PrepareRanks() {
  ASSIGN_OR_RETURN(const auto sorted, SortedTraces(input_));
  for (const trace::RankTrace* t : sorted) AddRank(t);
  if (traces_.empty()) {
    const trace::RankTrace& t = *sorted.front();
    return InvalidInput("no trace has an op inside a ProfilerStep span (" +
                        t.source + ": " + std::to_string(t.steps.size()) +
                        " spans, " + std::to_string(t.size()) +
                        " ops); profile with a schedule so that steps are "
                        "recorded");
  }
  return Status::Ok();
}

StepData Builder::MakeStep(int64_t id,
                           const std::vector<size_t>& span_of_rank) {
  StepData s;
  s.id = id;
  for (size_t r = 0; r < traces_.size(); ++r) {
    const size_t k = span_of_rank[r];
    if (options_.keep_segment_ops) {
      std::vector<uint32_t> node_of_row;
      s.nodes.push_back(
          BuildLocalNodes(*traces_[r], split_[r].rows[k], &node_of_row));
      s.ops.push_back(SumSegmentOps(*traces_[r], split_[r].rows[k],
                                    s.nodes.back(), node_of_row));
    } else {
      s.nodes.push_back(BuildLocalNodes(*traces_[r], split_[r].rows[k]));
    }
    s.complete = s.complete && !s.nodes.back().empty();
  }
  s.matching = MatchStep(catalog_, traces_, model_.ranks, s.nodes,
                         &model_.counters.duplicate_comm_ids);
  for (const MatchedComm& m : s.matching) {
    s.complete = s.complete && m.missing.empty();
  }
  return s;
}

// Keeps the steps every rank has; builds their nodes and matchings.
Status Builder::CollectSteps() {
  std::map<int64_t, std::vector<size_t>> span_of;  // id -> per rank
  for (size_t r = 0; r < traces_.size(); ++r) {
    for (size_t k = 0; k < split_[r].spans.size(); ++k) {
      auto& v = span_of[split_[r].spans[k].id];
      v.resize(traces_.size(), SIZE_MAX);
      v[r] = k;
    }
  }
  model_.counters.steps_seen = static_cast<int64_t>(span_of.size());
  catalog_ = BuildGroupCatalog(traces_, model_.ranks);
  for (const auto& [id, spans] : span_of) {
    auto missing = std::find(spans.begin(), spans.end(), SIZE_MAX);
    if (missing == spans.end()) {
      steps_.push_back(MakeStep(id, spans));
      continue;
    }
    ++model_.counters.steps_dropped;
    log_.Add("step-missing",
             "step " + std::to_string(id) + ": no ProfilerStep#" +
                 std::to_string(id) + " on " +
                 RankName(static_cast<size_t>(missing - spans.begin())) +
                 ": step dropped");
  }
  if (steps_.empty()) {
    std::string ranges;
    for (size_t r = 0; r < traces_.size() && r < 4; ++r) {
      const auto& sp = split_[r].spans;
      ranges += (r ? ", " : "") + RankName(r) + " has steps " +
                std::to_string(sp.front().id) + "-" +
                std::to_string(sp.back().id);
    }
    return InvalidInput("no step is present on every rank (" + ranges + ")");
  }
  return Status::Ok();
}

// The reference is the structure most steps share, preferring structures
// in which every collective is complete; its first step is the reference.
void Builder::ChooseReference() {
  struct Class {
    bool complete = false;
    int64_t count = 0;
    size_t first = 0;
  };
  std::map<uint64_t, Class> classes;
  for (size_t s = 0; s < steps_.size(); ++s) {
    const uint64_t h =
        StructureHash(traces_, steps_[s].nodes, steps_[s].matching);
    auto [it, inserted] = classes.emplace(h, Class{steps_[s].complete, 0, s});
    ++it->second.count;
  }
  const Class* best = nullptr;
  for (const auto& [h, c] : classes) {
    if (best == nullptr ||
        std::make_tuple(c.complete, c.count, -static_cast<int64_t>(c.first)) >
            std::make_tuple(best->complete, best->count,
                            -static_cast<int64_t>(best->first))) {
      best = &c;
    }
  }
  ref_ = best->first;
  model_.reference_step = steps_[ref_].id;
}

void Builder::DropDifferentSteps() {
  const StepData& ref = steps_[ref_];
  const std::string tail =
      " as in reference step " + std::to_string(ref.id) + ": step dropped";
  for (size_t s = 0; s < steps_.size(); ++s) {
    std::optional<std::string> why;
    for (size_t r = 0; r < traces_.size() && !why; ++r) {
      why = RankStructureDiff(*traces_[r], ref.nodes[r], steps_[s].nodes[r]);
      if (why) *why = RankName(r) + ": " + *why;
    }
    if (!why) {
      why = MatchingDiff(ref.matching, steps_[s].matching);
      if (why) *why += " is matched differently";
    }
    if (!why) {
      kept_.push_back(s);
      continue;
    }
    ++model_.counters.steps_dropped;
    log_.Add("step-differs",
             "step " + std::to_string(steps_[s].id) + ": " + *why + tail);
  }
  for (size_t s : kept_) model_.steps.push_back(steps_[s].id);
}

// Collectives a member never joined, in the reference (hence every kept)
// step; ranks listed in a group without a trace, once per group or peer.
void Builder::WarnIncomplete() {
  const StepData& ref = steps_[ref_];
  std::set<std::string> absent_told;  // one warning per group or peer
  for (const MatchedComm& m : ref.matching) WarnComm(m, &absent_told);
  if (!ref.complete) {
    log_.Add("reference-incomplete",
             "no step has every collective complete on every rank; the "
             "reference step " +
                 std::to_string(ref.id) + " is the most common structure");
  }
}

void Builder::WarnComm(const MatchedComm& m,
                       std::set<std::string>* absent_told) {
  GenericCounters& c = model_.counters;
  const bool lone_p2p = trace::IsP2p(m.kind) && m.members.size() < 2;
  c.p2p_unmatched += lone_p2p;
  c.collectives_incomplete += !m.missing.empty() && !trace::IsP2p(m.kind);
  if (!m.missing.empty()) {
    std::vector<int32_t> who;
    for (int32_t r : m.missing) {
      who.push_back(model_.ranks[static_cast<size_t>(r)]);
    }
    log_.Add("comm-incomplete",
             m.what + ": rank " + FormatRanks(who) +
                 " never joined (reference step " +
                 std::to_string(model_.reference_step) + "); kept with the " +
                 std::to_string(m.members.size()) + " member(s) present");
  } else if (lone_p2p && m.absent.empty()) {
    log_.Add("comm-incomplete", m.what + ": cannot be paired; kept alone");
  }
  if (m.absent.empty()) return;
  const bool in_group = m.group >= 0;
  const std::string key =
      in_group ? "g" + std::to_string(m.group) : "p" + FormatRanks(m.absent);
  if (!absent_told->insert(key).second) return;
  log_.Add("rank-absent",
           (in_group ? catalog_.groups[static_cast<size_t>(m.group)].label
                     : m.what) +
               ": rank " + FormatRanks(m.absent) +
               " has no trace; its comms are kept with the members present");
}

// Offsets 0 (clocks kept as written); the residuals are each collective's
// end-time spread around its median end.
ClockAlignment KeptRaw(size_t n, const CollectiveEnds& ends) {
  ClockAlignment c;
  c.offset_ns.assign(n, 0);
  c.anchor.assign(n, 0);
  c.collectives_of_rank.assign(n, 0);
  c.collectives = static_cast<int64_t>(ends.size());
  c.kept_raw = true;
  std::vector<int64_t> residuals;
  for (size_t k = 0; k < ends.size(); ++k) {
    std::vector<double> e;
    for (uint32_t i = ends.begin[k]; i < ends.begin[k + 1]; ++i) {
      // Relative to the first member: absolute ns do not fit a double.
      e.push_back(static_cast<double>(ends.end_ns[i] - ends.end_ns[ends.begin[k]]));
      ++c.collectives_of_rank[static_cast<size_t>(ends.rank[i])];
    }
    std::vector<double> sorted = e;
    const double median = Median(&sorted);
    for (double x : e) residuals.push_back(std::llround(std::abs(x - median)));
  }
  std::sort(residuals.begin(), residuals.end());
  if (!residuals.empty()) {
    c.residual_max_ns = residuals.back();
    c.residual_p99_ns = residuals[(residuals.size() - 1) * 99 / 100];
  }
  return c;
}

// Offsets from the matched collectives of the kept steps.
void Builder::Align() {
  const size_t n = traces_.size();
  if (!options_.align_clocks) {
    model_.clock.offset_ns.assign(n, 0);
    model_.clock.anchor.assign(n, -1);
    model_.clock.collectives_of_rank.assign(n, 0);
    return;
  }
  CollectiveEnds ends;
  // Absolute clocks that every collective finds causal are kept as written:
  // alignment would only turn the collectives' end spread into offsets.
  bool causal = std::all_of(traces_.begin(), traces_.end(),
                            [](const trace::RankTrace* t) {
                              return t->absolute_clock;
                            });
  for (size_t s : kept_) {
    for (const MatchedComm& m : steps_[s].matching) {
      if (m.members.size() < 2) continue;
      int64_t latest_start = std::numeric_limits<int64_t>::min();
      int64_t earliest_end = std::numeric_limits<int64_t>::max();
      for (const auto& [r, v] : m.members) {
        const LocalNode& node = steps_[s].nodes[static_cast<size_t>(r)][v];
        ends.Add(r, node.end_ns);
        latest_start = std::max(latest_start, node.start_ns);
        earliest_end = std::min(earliest_end, node.end_ns);
      }
      causal &= earliest_end >= latest_start;
      ends.Close();
    }
  }
  if (causal && ends.size() > 0) {
    model_.clock = KeptRaw(n, ends);
    return;
  }
  model_.clock = AlignClocks(n, ends, options_.clock);
  for (const std::string& w : ClockWarnings(model_.clock, model_.ranks)) {
    log_.Add("clock", w);
  }
}

void Builder::FillTimes() {
  const size_t num_steps = kept_.size();
  const StepData& ref = steps_[ref_];
  size_t num_nodes = 0;
  for (const auto& nodes : ref.nodes) num_nodes += nodes.size();
  model_.start_ns.resize(num_nodes * num_steps);
  model_.dur_ns.resize(num_nodes * num_steps);
  for (size_t k = 0; k < num_steps; ++k) {
    const StepData& s = steps_[kept_[k]];
    size_t v = 0;
    for (size_t r = 0; r < traces_.size(); ++r) {
      const int64_t offset = model_.clock.offset_ns[r];
      for (const LocalNode& n : s.nodes[r]) {
        model_.start_ns[v * num_steps + k] = n.start_ns + offset;
        model_.dur_ns[v * num_steps + k] = n.busy_ns;
        model_.counters.ops_used += n.num_ops;
        ++v;
      }
    }
  }
}

// The per-name totals of the kept steps, names interned across ranks.
void Builder::KeepSegmentOps() {
  if (!options_.keep_segment_ops) return;
  SegmentOpsBuilder b;
  const StepData& ref = steps_[ref_];
  for (size_t r = 0; r < traces_.size(); ++r) {
    uint32_t segments = 0;
    for (const LocalNode& n : ref.nodes[r]) {
      segments += n.type == trace::OpType::kCompute;
    }
    b.AddRank(*traces_[r], segments);
  }
  for (size_t s : kept_) {
    for (size_t r = 0; r < traces_.size(); ++r) {
      b.Add(r, steps_[s].id, steps_[s].ops[r]);
    }
    steps_[s].ops = {};
  }
  model_.segment_ops = b.Take();
}

// The graph comes from the reference step; counts the edges that the times
// of the other kept steps contradict (u ends after v starts), naming one.
void Builder::CheckOtherSteps() {
  const size_t num_steps = model_.steps.size();
  int64_t& count = model_.counters.edge_violations_other_steps;
  std::string example;
  for (NodeId v = 0; v < model_.graph.num_nodes(); ++v) {
    // A CPU trace's comm op may start before the op that issued it ends
    // (rank_edges.h, "issue" edges).
    if (model_.nodes[v].stream <= kCpuCommStream) continue;
    for (const uint32_t* u = model_.graph.dep_begin(v);
         u != model_.graph.dep_end(v); ++u) {
      for (size_t k = 0; k < num_steps; ++k) {
        const int64_t late =
            model_.start(*u, k) + model_.dur(*u, k) - model_.start(v, k);
        if (model_.steps[k] == model_.reference_step || late <= 0) continue;
        if (count++ == 0) {
          example = "step " + std::to_string(model_.steps[k]) + ": " +
                    DescribeNode(model_, *u) + " ends " + std::to_string(late) +
                    " ns after " + DescribeNode(model_, v) + " starts";
        }
      }
    }
  }
  if (count > 0) {
    log_.Add("edge-violation-other-steps",
             std::to_string(count) +
                 " (edge, step) pairs contradict a dependency seen in the "
                 "reference step, e.g. " +
                 example);
  }
}

Result<GenericModel> Builder::Build() {
  RETURN_IF_ERROR(PrepareRanks());
  RETURN_IF_ERROR(CollectSteps());
  ChooseReference();
  DropDifferentSteps();
  WarnIncomplete();
  Align();
  FillTimes();
  KeepSegmentOps();
  const StepData& ref = steps_[ref_];
  GraphInput in{model_.ranks, ref.nodes, ref.matching,
                options_.wait_tolerance_ns, {}};
  for (size_t s : kept_) {
    if (s != ref_) in.other_steps.emplace_back(steps_[s].nodes);
  }
  RETURN_IF_ERROR(BuildGenericGraph(in, &model_, &log_)
                      .WithContext("reference step " + std::to_string(ref.id)));
  CheckOtherSteps();
  model_.warnings = log_.Take();
  return std::move(model_);
}

}  // namespace

std::string DescribeNode(const GenericModel& model, NodeId v) {
  const GenericNode& n = model.nodes[v];
  std::string out =
      "rank " + std::to_string(model.ranks[static_cast<size_t>(n.rank_index)]) +
      " " + std::string(trace::OpTypeName(n.type)) + " #" +
      std::to_string(n.seq);
  if (n.type == trace::OpType::kCompute) {
    out += " (stream " + std::to_string(n.stream) + ")";
  }
  return out;
}

Result<GenericModel> BuildGenericModel(std::span<const trace::RankTrace> ranks,
                                       const GenericOptions& options) {
  return Builder(ranks, options).Build();
}

}  // namespace strag::graph
