// SPDX-License-Identifier: Apache-2.0
#include "report/profiler_input.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "graph/generic/generic_model.h"
#include "graph/generic/host_time.h"
#include "graph/generic/input_size.h"
#include "graph/generic/p2p_peers.h"
#include "graph/generic/warmup_steps.h"
#include "report/hosts.h"
#include "report/input_checks.h"
#include "whatif/prepared_generic.h"

namespace strag::report {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Ranks for the files that name none (tensorboard_trace_handler's
// `host_pid.ts.pt.trace.json` without distributedInfo): from `rank_map`
// (by file name, which also overrides what a file says), else the free
// ranks in file-name order, said in a warning.
void AssignRanks(const std::map<std::string, int32_t>& map,
                 std::vector<std::optional<trace::RankTrace>>* read,
                 InputNotes* notes) {
  std::set<int32_t> taken;
  std::vector<trace::RankTrace*> unranked;
  for (std::optional<trace::RankTrace>& r : *read) {
    if (!r) continue;
    const auto it = map.find(BaseName(r->source));
    if (it != map.end()) r->rank = it->second;
    if (r->rank >= 0) {
      taken.insert(r->rank);
    } else {
      unranked.push_back(&*r);
    }
  }
  if (unranked.empty()) return;
  std::sort(unranked.begin(), unranked.end(),
            [](const trace::RankTrace* a, const trace::RankTrace* b) {
              return BaseName(a->source) < BaseName(b->source);
            });
  std::string order;
  int32_t next = 0;
  for (trace::RankTrace* r : unranked) {
    while (taken.count(next)) ++next;
    r->rank = next++;
    if (order.size() < 400) {
      order += (order.empty() ? "" : ", ") + BaseName(r->source) + " -> " +
               std::to_string(r->rank);
    }
  }
  notes->warnings.push_back(
      std::to_string(unranked.size()) +
      " file(s) name no rank (no distributedInfo, no rank in the file name): "
      "numbered in file-name order (" +
      order +
      "); if that is not the job's order, give --rank-map FILE=RANK,...");
}

// One trace per rank: files of one rank with disjoint steps and times
// (profiling cycles of schedule(repeat=N)) are merged; another file
// claiming a rank is a warning and ignored.
std::vector<trace::RankTrace> OnePerRank(
    std::vector<std::optional<trace::RankTrace>> read, InputNotes* notes) {
  std::map<int32_t, size_t> owner;  // rank -> index into kept
  std::vector<trace::RankTrace> kept;
  int64_t merged = 0;
  for (std::optional<trace::RankTrace>& r : read) {
    if (!r) continue;
    auto [it, fresh] = owner.emplace(r->rank, kept.size());
    if (fresh) {
      kept.push_back(std::move(*r));
      continue;
    }
    trace::RankTrace& first = kept[it->second];
    const std::string source = r->source;
    if (trace::MergeRankTraces(std::move(*r), &first)) {
      ++merged;
      continue;
    }
    notes->warnings.push_back(
        source + ": claims rank " + std::to_string(first.rank) + ", as " +
        first.source + " does, with the same steps or times: ignored");
  }
  if (merged > 0) {
    notes->warnings.push_back(
        std::to_string(merged) +
        " file(s) hold another profiling cycle of a rank already read "
        "(other steps): merged");
  }
  std::sort(kept.begin(), kept.end(),
            [](const trace::RankTrace& a, const trace::RankTrace& b) {
              return a.rank < b.rank;
            });
  return kept;
}

// The world is the largest size a trace claims (or the highest rank + 1);
// it is a claim, so it sizes nothing: the ranks without a trace are counted
// and only the first kMaxListedMissingRanks are listed, found from the gaps
// between the ranks present (O(files), whatever the world).
Status NoteRanks(std::vector<trace::RankTrace>* ranks, InputNotes* notes) {
  int64_t world = 0;
  // The traces that claim the largest and the smallest world_size.
  const trace::RankTrace* largest = nullptr;
  const trace::RankTrace* smallest = nullptr;
  std::map<std::string, int64_t> skipped;
  for (const trace::RankTrace& r : *ranks) {
    world = std::max({world, int64_t{r.world_size}, int64_t{r.rank} + 1});
    if (r.world_size > 0) {
      if (largest == nullptr || r.world_size > largest->world_size) {
        largest = &r;
      }
      if (smallest == nullptr || r.world_size < smallest->world_size) {
        smallest = &r;
      }
    }
    notes->events += r.events;
    for (const auto& [why, n] : r.skipped) skipped[why] += n;
    for (const std::string& w : r.warnings) notes->warnings.push_back(w);
  }
  // One job has one world: traces that disagree would make the GPU count
  // (and so the cost) whichever claim came first.
  if (largest != nullptr && smallest->world_size != largest->world_size) {
    return InvalidInput(
        "the traces disagree on the world size: " + largest->source +
        " claims distributedInfo.world_size " +
        std::to_string(largest->world_size) + ", " + smallest->source +
        " claims " + std::to_string(smallest->world_size));
  }
  if (world > std::numeric_limits<int32_t>::max()) {
    return InvalidInput("rank " + std::to_string(world - 1) +
                        " needs a world of " + std::to_string(world) +
                        " ranks, more than the largest (2147483647)");
  }
  for (trace::RankTrace& r : *ranks) {
    if (r.world_size == 0) r.world_size = static_cast<int32_t>(world);
  }
  notes->files = static_cast<int64_t>(ranks->size());
  notes->world_size = static_cast<int32_t>(world);
  notes->skipped.assign(skipped.begin(), skipped.end());
  // The ranks are distinct and sorted (OnePerRank), all below the world.
  notes->missing_rank_count = world - static_cast<int64_t>(ranks->size());
  int64_t next = 0;  // the first rank not yet looked at
  const auto list_up_to = [&](int64_t end) {
    for (; next < end && notes->missing_ranks.size() < kMaxListedMissingRanks;
         ++next) {
      notes->missing_ranks.push_back(static_cast<int32_t>(next));
    }
    next = end;
  };
  for (const trace::RankTrace& r : *ranks) {
    list_up_to(r.rank);
    next = int64_t{r.rank} + 1;
  }
  list_up_to(world);
  if (notes->missing_rank_count > 0) {
    const bool all_listed = notes->missing_rank_count <=
                            static_cast<int64_t>(notes->missing_ranks.size());
    notes->warnings.push_back(
        std::to_string(notes->missing_rank_count) + " of " +
        std::to_string(world) +
        " ranks have no usable trace: their collectives are analysed "
        "with the members present" +
        (all_listed ? std::string()
                    : " (a world far larger than the " +
                          std::to_string(ranks->size()) +
                          " traces given: only the first " +
                          std::to_string(kMaxListedMissingRanks) +
                          " missing ranks are listed)"));
  }
  return Status::Ok();
}

void NoteClock(const graph::GenericModel& model, InputNotes* notes) {
  const graph::ClockAlignment& c = model.clock;
  for (size_t i = 0; i < model.ranks.size() && i < c.offset_ns.size(); ++i) {
    notes->clock.offset_ns.emplace_back(model.ranks[i], c.offset_ns[i]);
    notes->clock.max_abs_offset_ns =
        std::max(notes->clock.max_abs_offset_ns,
                 c.offset_ns[i] < 0 ? -c.offset_ns[i] : c.offset_ns[i]);
  }
  notes->clock.residual_max_us = static_cast<double>(c.residual_max_ns) * 1e-3;
  notes->clock.residual_p99_us = static_cast<double>(c.residual_p99_ns) * 1e-3;
  notes->clock.collectives = c.collectives;
  notes->clock.kept_raw = c.kept_raw;
  for (const std::string& w : model.warnings) notes->warnings.push_back(w);
  const graph::GenericCounters& n = model.counters;
  if (n.ops_outside_steps > 0) {
    notes->skipped.emplace_back("ops outside every ProfilerStep",
                                n.ops_outside_steps);
  }
}

// Hosts from the file names (tensorboard_trace_handler's
// `<host>_<pid>....pt.trace.json`), when every rank's names one.
void NameHosts(const std::vector<trace::RankTrace>& ranks,
               trace::Topology* topology) {
  HostMap hosts;
  for (const trace::RankTrace& r : ranks) {
    std::optional<std::string> host = HostFromTraceFileName(r.source);
    if (!host) return;
    hosts.emplace(r.rank, std::move(*host));
  }
  (void)ApplyHosts(hosts, "trace file names", topology);
}

std::string JoinIds(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

// Why the traces are too few for a diagnosis (a single rank, or fewer than
// half the world's ranks), or "".
std::string CoverageProblem(const ReportInput& job) {
  const auto traced = static_cast<int64_t>(job.prepared.workers.size());
  if (traced < 2) {
    return "only one rank is traced: a straggler shows against the others";
  }
  if (2 * traced < job.notes->world_size) {
    return "only " + std::to_string(traced) + " of " +
           std::to_string(job.notes->world_size) +
           " ranks are traced: a straggler among the others is invisible";
  }
  return "";
}

}  // namespace

Result<ReportInput> ProfilerInput(
    std::vector<std::optional<trace::RankTrace>> read,
    ProfilerInputOptions options) {
  ReportInput job{.source = std::move(options.source),
                  .meta = std::move(options.meta),
                  .notes = std::move(options.notes)};
  job.notes->format = "kineto";
  graph::LayoutFlags layout = options.layout;
  AssignRanks(options.rank_map, &read, &*job.notes);
  std::vector<trace::RankTrace> ranks =
      OnePerRank(std::move(read), &*job.notes);
  if (ranks.empty()) {
    return InvalidInput("no trace could be read:" + options.read_errors);
  }
  RETURN_IF_ERROR(NoteRanks(&ranks, &*job.notes));
  // The segments' per-name totals are kept for the kernel detail.
  graph::GenericOptions generic;
  generic.keep_segment_ops = true;
  ASSIGN_OR_RETURN(graph::GenericModel model,
                   graph::BuildGenericModel(ranks, generic));
  layout.world_size = job.notes->world_size;
  std::vector<int64_t> warmup = graph::DropWarmupSteps(&model);
  graph::InferredLayout inferred = graph::InferLayout(model, layout);
  // Pipelines whose p2p name no peer: peers from the stages, then the model
  // again, now with the p2p pairs (and the layout from their chains).
  if (inferred.peers_unknown) {
    const int64_t assigned =
        graph::AssignPipelinePeers(model, inferred.topology, &ranks);
    auto paired = graph::BuildGenericModel(ranks, generic);
    if (assigned > 0 && paired.ok()) {
      model = std::move(paired).value();
      warmup = graph::DropWarmupSteps(&model);
      std::vector<std::string> before = std::move(inferred.warnings);
      inferred = graph::InferLayout(model, layout);
      inferred.warnings.insert(inferred.warnings.begin(), before.begin(),
                               before.end());
      inferred.warnings.push_back(
          std::to_string(assigned) +
          " p2p ops named no peer: peers taken from the pipeline stages "
          "(forward to the next stage, backward to the previous)");
    } else if (assigned > 0) {
      inferred.warnings.push_back(
          "p2p peers taken from the pipeline stages give no usable model (" +
          paired.status().message() + "): p2p left unpaired");
    }
  }
  NoteClock(model, &*job.notes);
  if (!warmup.empty()) {
    job.notes->warnings.push_back(
        "step(s) " + JoinIds(warmup) + " took over " +
        std::to_string(static_cast<int>(graph::kWarmupFactor)) +
        "x the median step at the start of the trace: left out as warm-up");
  }
  for (std::string& w : inferred.warnings) {
    job.notes->warnings.push_back(std::move(w));
  }
  job.notes->layout = inferred.topology.source;
  NameHosts(ranks, &inferred.topology);
  job.notes->cpu_only = std::all_of(
      ranks.begin(), ranks.end(),
      [](const trace::RankTrace& r) { return r.cpu_only; });
  const graph::HostTime host = graph::MeasureHostTime(ranks, model);
  graph::InputSize input = graph::MeasureInputSize(ranks, model);
  job.segment_ops = std::move(model.segment_ops);
  ASSIGN_OR_RETURN(job.prepared,
                   whatif::PrepareGenericTrace(std::move(model),
                                               std::move(inferred.topology)));
  for (int64_t ns : host.data_loading_ns) {
    job.prepared.data_loading_s.push_back(
        static_cast<float>(1e-9 * static_cast<double>(ns)));
  }
  for (int64_t ns : host.gc_ns) {
    job.prepared.gc_s.push_back(
        static_cast<float>(1e-9 * static_cast<double>(ns)));
  }
  job.prepared.input_size.assign(input.per_step.begin(), input.per_step.end());
  job.prepared.input_size_source = std::move(input.source);
  // Times in another unit, or clocks the fit could not bring together: no
  // diagnosis may rest on them (issue 11), whatever the coverage.
  std::string input_problem = UnitMismatch(ranks);
  if (input_problem.empty()) {
    input_problem =
        ImplausibleClockFit(job.notes->clock, MedianStepSpanNs(ranks));
  }
  if (!input_problem.empty()) {
    job.coverage = input_problem;
    job.notes->warnings.push_back(
        "no diagnosis: " + input_problem +
        "; the numbers rest on times that do not agree");
  } else {
    job.coverage = CoverageProblem(job);
    if (!job.coverage.empty()) {
      job.notes->warnings.push_back(
          "no diagnosis: " + job.coverage +
          "; the numbers describe the traced ranks only");
    }
  }
  if (job.meta.world_size == 0) job.meta.world_size = job.notes->world_size;
  return job;
}

}  // namespace strag::report
