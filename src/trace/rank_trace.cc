// SPDX-License-Identifier: Apache-2.0
#include "trace/rank_trace.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace strag::trace {

bool MergeRankTraces(RankTrace&& from, RankTrace* into) {
  std::set<int64_t> ids;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const StepSpan& s : into->steps) {
    ids.insert(s.id);
    lo = std::min(lo, s.start_ns);
    hi = std::max(hi, s.end_ns);
  }
  for (const StepSpan& s : from.steps) {
    // A shared step id, or a step in the other's time range (a clock that
    // restarted with the cycle: its times cannot be placed).
    if (ids.count(s.id) || (s.start_ns < hi && s.end_ns > lo)) return false;
  }
  // Groups by name (the same process group in both cycles).
  std::vector<int32_t> group_of(from.groups.size());
  for (size_t g = 0; g < from.groups.size(); ++g) {
    const auto it = std::find_if(into->groups.begin(), into->groups.end(),
                                 [&](const ProcessGroupInfo& x) {
                                   return x.name == from.groups[g].name;
                                 });
    if (it != into->groups.end()) {
      group_of[g] = static_cast<int32_t>(it - into->groups.begin());
    } else {
      group_of[g] = static_cast<int32_t>(into->groups.size());
      into->groups.push_back(std::move(from.groups[g]));
    }
  }
  const auto comm_base = static_cast<int32_t>(into->comms.size());
  for (CommOp& c : from.comms) {
    if (c.group >= 0) c.group = group_of[static_cast<size_t>(c.group)];
    into->comms.push_back(c);
  }
  const auto name_base = static_cast<uint32_t>(into->names.size());
  for (std::string& n : from.names) into->names.push_back(std::move(n));
  if (!from.launch_op.empty() || !into->launch_op.empty()) {
    into->launch_op.resize(into->size(), RankTrace::kNoLaunchOp);
    for (size_t r = 0; r < from.size(); ++r) {
      const uint32_t op = from.LaunchOp(r);
      into->launch_op.push_back(op == RankTrace::kNoLaunchOp ? op
                                                             : op + name_base);
    }
  }
  for (size_t r = 0; r < from.size(); ++r) {
    into->start_ns.push_back(from.start_ns[r]);
    into->dur_ns.push_back(from.dur_ns[r]);
    into->launch_ns.push_back(from.launch_ns[r]);
    into->stream.push_back(from.stream[r]);
    into->comm.push_back(from.comm[r] < 0 ? -1 : from.comm[r] + comm_base);
    into->name.push_back(from.name[r] + name_base);
  }
  into->steps.insert(into->steps.end(), from.steps.begin(), from.steps.end());
  std::stable_sort(into->steps.begin(), into->steps.end(),
                   [](const StepSpan& a, const StepSpan& b) {
                     return a.start_ns < b.start_ns;
                   });
  into->host_spans.insert(into->host_spans.end(), from.host_spans.begin(),
                          from.host_spans.end());
  const auto numel_base = static_cast<uint32_t>(into->input_numels.size());
  for (InputShape shape : from.input_shapes) {
    shape.name += name_base;
    shape.first += numel_base;
    into->input_shapes.push_back(shape);
  }
  into->input_numels.insert(into->input_numels.end(), from.input_numels.begin(),
                            from.input_numels.end());
  into->world_size = std::max(into->world_size, from.world_size);
  into->events += from.events;
  for (auto& [why, n] : from.skipped) {
    const auto it =
        std::find_if(into->skipped.begin(), into->skipped.end(),
                     [&why = why](const auto& x) { return x.first == why; });
    if (it != into->skipped.end()) {
      it->second += n;
    } else {
      into->skipped.emplace_back(why, n);
    }
  }
  for (std::string& w : from.warnings) into->warnings.push_back(std::move(w));
  into->source += " + " + from.source;
  return true;
}

}  // namespace strag::trace
