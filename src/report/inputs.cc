// SPDX-License-Identifier: Apache-2.0
#include "report/inputs.h"

#include <algorithm>
#include <utility>

#include "whatif/prepared_trace.h"

namespace strag::report {

Result<ReportInput> OpsTableInput(const trace::OpsTable& table,
                                  trace::JobMeta meta, std::string source) {
  auto prepared = whatif::PrepareTrace(table, meta);
  if (!prepared.ok()) return prepared.status().WithContext(source);
  return ReportInput{.source = std::move(source),
                     .prepared = std::move(prepared).value(),
                     .meta = std::move(meta)};
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
  return in;
}

}  // namespace strag::report
