// SPDX-License-Identifier: Apache-2.0
#include "sim/ops_table_stream.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace strag::sim {
namespace {

// Empties every column, keeping their capacity for the next batch.
void ClearRows(trace::OpsTable* t) {
  t->rank.clear();
  t->dp.clear();
  t->pp.clear();
  t->step.clear();
  t->op_type.clear();
  t->seq_id.clear();
  t->chunk.clear();
  t->microbatch.clear();
  t->global_chunk.clear();
  t->start_ns.clear();
  t->dur_ns.clear();
  t->tp.clear();
  t->tokens.clear();
  for (trace::ExtraColumn& extra : t->extra) extra.clear();
}

}  // namespace

OpsTableStream::OpsTableStream(const SimulatedJob& job, int64_t first_step,
                               int64_t last_step)
    : first_step_(first_step),
      last_step_(last_step),
      nodes_of_stage_(static_cast<size_t>(job.spec.job.pp)) {
  const auto& keys = job.schedule.model.keys;
  for (size_t v = 0; v < keys.size(); ++v) {
    nodes_of_stage_[static_cast<size_t>(keys[v].stage)].push_back(
        static_cast<uint32_t>(v));
  }
}

void OpsTableStream::AppendWorker(const SimulatedJob& window, size_t k,
                                  int32_t stage, size_t d,
                                  trace::OpsTable* table) {
  const size_t lanes = window.num_lanes();
  const auto dp = static_cast<size_t>(window.dp_replicas);
  const int32_t pp = window.spec.job.pp;
  const auto m = static_cast<size_t>(window.spec.job.microbatches);
  const size_t l = k * dp + d;
  const int64_t step = window.steps[k];
  const auto rank =
      static_cast<int32_t>(window.WorkerRank(static_cast<int32_t>(d), stage));
  trace::ExtraColumn& seq_lens = table->extra[0];
  for (uint32_t v : nodes_of_stage_[static_cast<size_t>(stage)]) {
    const graph::OpKey& key = window.schedule.model.keys[v];
    const int64_t start = std::llround(window.times.start[v * lanes + l] * 1e9);
    const int64_t end = std::llround(window.times.end[v * lanes + l] * 1e9);
    const int32_t mb = window.schedule.microbatch[v];
    const int32_t chunk = window.schedule.chunk[v];
    const bool compute = trace::IsCompute(key.type);
    table->rank.push_back(rank);
    table->dp.push_back(static_cast<int32_t>(d));
    table->pp.push_back(stage);
    table->step.push_back(step);
    table->op_type.push_back(key.type);
    table->seq_id.push_back(key.seq_id);
    table->chunk.push_back(chunk);
    table->microbatch.push_back(compute ? mb : -1);
    table->global_chunk.push_back(compute ? chunk * pp + stage : -1);
    table->start_ns.push_back(origin_ns_ + start);
    table->dur_ns.push_back(std::max<int64_t>(0, end - start));
    table->tp.push_back(0);
    int64_t tokens = 0;
    lens_.clear();
    if (compute && mb >= 0) {
      for (int64_t x : window.sequences[l * m + static_cast<size_t>(mb)]) {
        tokens += x;
        if (!lens_.empty()) lens_ += ';';
        char buf[24];
        lens_.append(buf, std::to_chars(buf, buf + sizeof(buf), x).ptr);
      }
    }
    table->tokens.push_back(tokens);
    seq_lens.push_back(lens_);
  }
}

Status OpsTableStream::Add(const SimulatedJob& window, size_t batch_rows,
                           trace::OpsTable* table, const Flush& flush) {
  if (table->extra.empty()) table->extra.emplace_back("seq_lens");
  const auto dp = static_cast<size_t>(window.dp_replicas);
  for (size_t k = 0; k < window.steps.size(); ++k) {
    const int64_t step = window.steps[k];
    const int64_t span_ns = std::llround(window.step_times.span[k] * 1e9);
    if (step >= first_step_ && step <= last_step_) {
      for (int32_t s = 0; s < window.spec.job.pp; ++s) {
        for (size_t d = 0; d < dp; ++d) {
          const size_t before = table->size();
          AppendWorker(window, k, s, d, table);
          rows_ += table->size() - before;
          if (table->size() >= batch_rows) {
            RETURN_IF_ERROR(flush(*table));
            ClearRows(table);
          }
        }
      }
    }
    origin_ns_ += span_ns + 1'000'000;
  }
  return Status::Ok();
}

trace::OpsTable ToOpsTable(const SimulatedJob& job, int64_t first_step,
                           int64_t last_step) {
  trace::OpsTable table;
  OpsTableStream stream(job, first_step, last_step);
  const Status status =
      stream.Add(job, std::numeric_limits<size_t>::max(), &table,
                 [](const trace::OpsTable&) { return Status::Ok(); });
  (void)status;  // a flush that never fails, never called
  if (table.extra.empty()) table.extra.emplace_back("seq_lens");
  return table;
}

}  // namespace strag::sim
