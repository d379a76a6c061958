// SPDX-License-Identifier: Apache-2.0
#include "report/render/kernel_detail_json.h"

namespace strag::report {
namespace {

// `launched`: an entry of launch_ops (with `cpu_op` and `kernels`).
void WriteOp(JsonWriter* w, const OpExcess& op, bool launched = false) {
  w->BeginObject();
  w->FieldString("name", op.name);
  if (launched) {
    w->Key("cpu_op");  // false: a kernel launched outside any CPU op
    w->Bool(!op.kernels.empty());
  }
  w->FieldInt("count", op.count);
  w->FieldInt("median_count", op.median_count);
  w->Field("total_s", op.total_s);
  w->Field("median_total_s", op.median_total_s);
  w->Field("excess_s", op.excess_s);
  w->Key("ratio");  // null: no time of it on the median rank
  if (op.median_total_s > 0) {
    w->Number(op.ratio);
  } else {
    w->Null();
  }
  if (launched) {
    w->Key("kernels");
    w->BeginArray();
    for (const OpExcess& k : op.kernels) WriteOp(w, k);
    w->EndArray();
  }
  w->EndObject();
}

void WriteLaunchOps(JsonWriter* w, const std::vector<OpExcess>& ops) {
  w->Key("launch_ops");
  w->BeginArray();
  for (const OpExcess& op : ops) WriteOp(w, op, true);
  w->EndArray();
}

void WriteSegment(JsonWriter* w, const SegmentExcess& s) {
  w->BeginObject();
  w->FieldInt("segment", s.segment);
  w->Field("total_s", s.total_s);
  w->Field("median_total_s", s.median_total_s);
  w->Field("excess_s", s.excess_s);
  w->Key("ops");
  w->BeginArray();
  for (const OpExcess& op : s.ops) WriteOp(w, op);
  w->EndArray();
  WriteLaunchOps(w, s.launch_ops);
  w->EndObject();
}

}  // namespace

void WriteKernelDetail(JsonWriter* w, const std::vector<KernelDetail>& detail) {
  w->Key("kernel_detail");
  w->BeginArray();
  for (const KernelDetail& d : detail) {
    w->BeginObject();
    w->FieldInt("rank", d.rank);
    w->FieldInt("median_rank", d.median_rank);
    w->FieldInt("peers", d.peers);
    w->FieldIntArray("steps", d.steps);
    w->FieldString("names", d.cpu_ops ? "cpu_ops" : "gpu_kernels");
    w->Field("excess_s", d.excess_s);
    w->Key("ops");
    w->BeginArray();
    for (const OpExcess& op : d.ops) WriteOp(w, op);
    w->EndArray();
    WriteLaunchOps(w, d.launch_ops);
    w->Key("segments");
    w->BeginArray();
    for (const SegmentExcess& s : d.segments) WriteSegment(w, s);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace strag::report
