// SPDX-License-Identifier: Apache-2.0
#include "sim/schedule_model.h"

#include "sim/megatron_schedule.h"

namespace strag::sim {

Result<ScheduleModel> BuildScheduleModel(int32_t pp, int32_t vpp,
                                         int32_t microbatches, bool with_dp) {
  if (pp < 1 || vpp < 1 || microbatches < 1) {
    return InvalidInput("a job needs pp, vpp and microbatches >= 1");
  }
  std::vector<graph::RefOp> ref;
  std::vector<int32_t> microbatch_of;
  for (int32_t s = 0; s < pp; ++s) {
    const auto program =
        vpp > 1 ? InterleavedProgram(s, pp, microbatches, vpp, with_dp)
                : OneFOneBProgram(s, pp, microbatches, with_dp);
    for (size_t k = 0; k < program.size(); ++k) {
      const ScheduledOp& op = program[k];
      ref.push_back(graph::RefOp{
          .key = {op.type, op.seq_id, s},
          .chunk = op.chunk,
          .global_chunk = trace::IsCompute(op.type) ? op.chunk * pp + s : -1,
          .start = static_cast<float>(k),
          .end = static_cast<float>(k) + 0.5f,
      });
      microbatch_of.push_back(op.microbatch);
    }
  }
  ScheduleModel out;
  ASSIGN_OR_RETURN(out.model,
                   graph::BuildMegatronModel(
                       ref, {.pp = pp, .vpp = vpp, .use_dp = with_dp}));
  // The builder orders nodes by (stage, type, seq); map back to the program.
  const size_t n = out.model.keys.size();
  out.microbatch.assign(n, -1);
  out.chunk.assign(n, -1);
  for (size_t r = 0; r < ref.size(); ++r) {
    const auto v = static_cast<size_t>(out.model.index.Find(ref[r].key));
    out.microbatch[v] = microbatch_of[r];
    out.chunk[v] = ref[r].chunk;
  }
  return out;
}

}  // namespace strag::sim
