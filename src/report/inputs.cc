// SPDX-License-Identifier: Apache-2.0
#include "report/inputs.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>
#include <utility>

#include "whatif/prepared_trace.h"

namespace strag::report {
namespace {

// "1024;2048;512": the lengths of a microbatch; false when not that.
bool ParseLengths(std::string_view text, std::vector<int32_t>* out) {
  out->clear();
  while (!text.empty()) {
    const size_t semi = text.find(';');
    const std::string_view item = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view()
                                          : text.substr(semi + 1);
    int32_t n = 0;
    const auto [ptr, ec] =
        std::from_chars(item.data(), item.data() + item.size(), n);
    if (ec != std::errc() || ptr != item.data() + item.size() || n < 1) {
      return false;
    }
    out->push_back(n);
  }
  return !out->empty();
}

// Flattens per-(instance, microbatch) lengths.
void Flatten(std::vector<std::vector<int32_t>>& per, int32_t microbatches,
             whatif::SequenceLengths* out) {
  out->microbatches = microbatches;
  out->offsets.assign(1, 0);
  for (std::vector<int32_t>& lens : per) {
    out->lengths.insert(out->lengths.end(), lens.begin(), lens.end());
    out->offsets.push_back(out->lengths.size());
  }
}

// The ops CSV's seq_lens column (a microbatch's lengths on its compute
// rows) per (instance, microbatch); none when any compute row of a
// microbatch lacks it or it does not parse.
whatif::SequenceLengths TableSequences(const trace::OpsTable& table,
                                       const whatif::PreparedTrace& p) {
  whatif::SequenceLengths out;
  const trace::ExtraColumn* column = nullptr;
  for (const trace::ExtraColumn& c : table.extra) {
    if (c.name == "seq_lens") column = &c;
  }
  if (column == nullptr || p.row.empty()) return out;
  const size_t inst = p.num_instances();
  std::vector<int32_t> node_mb(p.num_nodes(), -1);
  int32_t microbatches = 0;
  for (graph::NodeId v = 0; v < p.num_nodes(); ++v) {
    if (!trace::IsCompute(p.model.keys[v].type)) continue;
    node_mb[v] = table.microbatch[p.row[v * inst]];
    microbatches = std::max(microbatches, node_mb[v] + 1);
  }
  if (microbatches == 0) return out;
  const auto m = static_cast<size_t>(microbatches);
  std::vector<std::vector<int32_t>> per(inst * m);
  std::vector<int32_t> lens;
  for (graph::NodeId v = 0; v < p.num_nodes(); ++v) {
    if (node_mb[v] < 0) continue;
    for (size_t i = 0; i < inst; ++i) {
      std::vector<int32_t>& slot = per[i * m + static_cast<size_t>(node_mb[v])];
      if (!slot.empty()) continue;
      if (!ParseLengths((*column)[p.row[v * inst + i]], &lens)) return out;
      slot = lens;
    }
  }
  for (const std::vector<int32_t>& slot : per) {
    if (slot.empty()) return out;
  }
  Flatten(per, microbatches, &out);
  out.node_microbatch = std::move(node_mb);
  return out;
}

}  // namespace

Result<ReportInput> OpsTableInput(const trace::OpsTable& table,
                                  trace::JobMeta meta, std::string source,
                                  size_t threads) {
  auto prepared = whatif::PrepareTrace(table, meta, threads);
  if (!prepared.ok()) return prepared.status().WithContext(source);
  ReportInput in{.source = std::move(source),
                 .prepared = std::move(prepared).value(),
                 .meta = std::move(meta)};
  in.prepared.sequences = TableSequences(table, in.prepared);
  return in;
}

Result<ReportInput> OpsTableInputReleasing(trace::OpsTable* table,
                                           trace::JobMeta meta,
                                           std::string source, size_t threads) {
  auto prepared = whatif::PrepareTraceReleasing(table, meta, threads);
  if (!prepared.ok()) return prepared.status().WithContext(source);
  ReportInput in{.source = std::move(source),
                 .prepared = std::move(prepared).value(),
                 .meta = std::move(meta)};
  in.prepared.sequences = TableSequences(*table, in.prepared);
  return in;
}

ReportInput SimulatedInput(sim::SimulatedJob* job) {
  ReportInput in{.source = "simulated " + job->spec.name,
                 .meta = sim::MetaOf(*job)};
  whatif::PreparedTrace& p = in.prepared;
  const sim::JobSection& j = job->spec.job;
  p.model = std::move(job->schedule.model);
  p.dp = job->dp_replicas;
  p.pp = j.pp;
  p.vpp = j.vpp;
  p.steps = job->steps;
  p.worker_rank.resize(static_cast<size_t>(p.dp) * static_cast<size_t>(p.pp));
  for (int32_t d = 0; d < p.dp; ++d) {
    for (int32_t s = 0; s < p.pp; ++s) {
      const auto rank = static_cast<int32_t>(job->WorkerRank(d, s));
      p.worker_rank[static_cast<size_t>(d * p.pp + s)] = rank;
      p.workers.push_back(whatif::Worker{rank, d, s});
    }
  }
  std::sort(p.workers.begin(), p.workers.end(),
            [](const whatif::Worker& a, const whatif::Worker& b) {
              return a.rank < b.rank;
            });
  p.start = std::move(job->start32);
  p.launch_delay = std::move(job->launch_delay);
  p.cost = std::move(job->cost);
  for (double span : job->step_times.span) {
    p.step_t_base.push_back(static_cast<float>(span));
  }
  const int32_t m = j.microbatches;
  if (!job->sequences.empty() && m > 0) {
    std::vector<std::vector<int32_t>> per(job->sequences.size());
    for (size_t k = 0; k < per.size(); ++k) {
      for (int64_t x : job->sequences[k]) {
        per[k].push_back(static_cast<int32_t>(x));
      }
    }
    Flatten(per, m, &p.sequences);
    p.sequences.node_microbatch = job->schedule.microbatch;
  }
  return in;
}

}  // namespace strag::report
