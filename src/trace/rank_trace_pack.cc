// SPDX-License-Identifier: Apache-2.0
#include "trace/rank_trace_pack.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strag::trace {
namespace {

// Structs are packed member by member (as columns), never as raw bytes:
// their padding would travel uninitialized.

void PutString(const std::string& s, BytePacker* out) {
  out->PutArray<char>(s);
}

std::string GetString(ByteUnpacker* in) {
  const std::vector<char> chars = in->GetArray<char>();
  return std::string(chars.begin(), chars.end());
}

void PutStrings(const std::vector<std::string>& strings, BytePacker* out) {
  out->Put<uint64_t>(strings.size());
  for (const std::string& s : strings) PutString(s, out);
}

std::vector<std::string> GetStrings(ByteUnpacker* in) {
  const auto n = in->Get<uint64_t>();
  std::vector<std::string> strings;
  for (uint64_t k = 0; in->ok() && k < n; ++k) {
    strings.push_back(GetString(in));
  }
  return strings;
}

// The column `member` of `items`, as Out (a bool as a byte: a
// std::vector<bool> has no array to pack).
template <typename Out = void, typename T, typename Member>
auto ColumnOf(const std::vector<T>& items, Member T::*member) {
  using Value = std::conditional_t<std::is_void_v<Out>, Member, Out>;
  std::vector<Value> column;
  column.reserve(items.size());
  for (const T& item : items)
    column.push_back(static_cast<Value>(item.*member));
  return column;
}

// Sets `member` of items [0, column.size()) from `column`, growing `items`
// to at least its size; false when an earlier column was of another size.
template <typename In, typename T, typename Member>
bool SetColumn(const std::vector<In>& column, Member T::*member,
               std::vector<T>* items, bool first) {
  if (first) items->resize(column.size());
  if (column.size() != items->size()) return false;
  for (size_t k = 0; k < column.size(); ++k) {
    (*items)[k].*member = static_cast<Member>(column[k]);
  }
  return true;
}

}  // namespace

void PackRankTrace(const RankTrace& t, BytePacker* out) {
  PutString(t.source, out);
  out->Put<int32_t>(t.rank);
  out->Put<int32_t>(t.world_size);
  PutString(t.backend, out);
  out->Put<uint8_t>(t.absolute_clock ? 1 : 0);
  out->Put<uint8_t>(t.cpu_only ? 1 : 0);
  out->Put<uint64_t>(t.groups.size());
  for (const ProcessGroupInfo& g : t.groups) {
    PutString(g.name, out);
    PutString(g.desc, out);
    out->PutArray<int32_t>(g.ranks);
  }
  out->PutArray<int64_t>(ColumnOf(t.steps, &StepSpan::id));
  out->PutArray<int64_t>(ColumnOf(t.steps, &StepSpan::start_ns));
  out->PutArray<int64_t>(ColumnOf(t.steps, &StepSpan::end_ns));

  out->PutArray<int64_t>(t.start_ns);
  out->PutArray<int64_t>(t.dur_ns);
  out->PutArray<int64_t>(t.launch_ns);
  out->PutArray<int32_t>(t.stream);
  out->PutArray<int32_t>(t.comm);
  out->PutArray<uint32_t>(t.name);
  out->PutArray<uint32_t>(t.launch_op);
  PutStrings(t.names, out);

  out->PutArray<OpType>(ColumnOf(t.comms, &CommOp::kind));
  out->PutArray<int32_t>(ColumnOf(t.comms, &CommOp::group));
  out->PutArray<int64_t>(ColumnOf(t.comms, &CommOp::seq));
  out->PutArray<int64_t>(ColumnOf(t.comms, &CommOp::in_nelems));
  out->PutArray<int64_t>(ColumnOf(t.comms, &CommOp::out_nelems));
  out->PutArray<int32_t>(ColumnOf(t.comms, &CommOp::group_size));
  out->PutArray<int32_t>(ColumnOf(t.comms, &CommOp::peer));
  out->PutArray<uint8_t>(ColumnOf<uint8_t>(t.comms, &CommOp::async_post));

  out->PutArray<HostKind>(ColumnOf(t.host_spans, &HostSpan::kind));
  out->PutArray<int64_t>(ColumnOf(t.host_spans, &HostSpan::start_ns));
  out->PutArray<int64_t>(ColumnOf(t.host_spans, &HostSpan::end_ns));

  out->PutArray<int64_t>(ColumnOf(t.input_shapes, &InputShape::start_ns));
  out->PutArray<uint32_t>(ColumnOf(t.input_shapes, &InputShape::name));
  out->PutArray<uint32_t>(ColumnOf(t.input_shapes, &InputShape::first));
  out->PutArray<uint32_t>(ColumnOf(t.input_shapes, &InputShape::count));
  out->PutArray<int64_t>(t.input_numels);

  out->Put<int64_t>(t.events);
  out->Put<uint64_t>(t.skipped.size());
  for (const auto& [what, count] : t.skipped) {
    PutString(what, out);
    out->Put<int64_t>(count);
  }
  PutStrings(t.warnings, out);
}

Result<RankTrace> UnpackRankTrace(ByteUnpacker* in) {
  RankTrace t;
  t.source = GetString(in);
  t.rank = in->Get<int32_t>();
  t.world_size = in->Get<int32_t>();
  t.backend = GetString(in);
  t.absolute_clock = in->Get<uint8_t>() != 0;
  t.cpu_only = in->Get<uint8_t>() != 0;
  const auto groups = in->Get<uint64_t>();
  for (uint64_t k = 0; in->ok() && k < groups; ++k) {
    ProcessGroupInfo& g = t.groups.emplace_back();
    g.name = GetString(in);
    g.desc = GetString(in);
    g.ranks = in->GetArray<int32_t>();
  }
  bool same = SetColumn(in->GetArray<int64_t>(), &StepSpan::id, &t.steps, true);
  same &=
      SetColumn(in->GetArray<int64_t>(), &StepSpan::start_ns, &t.steps, false);
  same &=
      SetColumn(in->GetArray<int64_t>(), &StepSpan::end_ns, &t.steps, false);

  t.start_ns = in->GetArray<int64_t>();
  t.dur_ns = in->GetArray<int64_t>();
  t.launch_ns = in->GetArray<int64_t>();
  t.stream = in->GetArray<int32_t>();
  t.comm = in->GetArray<int32_t>();
  t.name = in->GetArray<uint32_t>();
  t.launch_op = in->GetArray<uint32_t>();
  t.names = GetStrings(in);

  same &= SetColumn(in->GetArray<OpType>(), &CommOp::kind, &t.comms, true);
  same &= SetColumn(in->GetArray<int32_t>(), &CommOp::group, &t.comms, false);
  same &= SetColumn(in->GetArray<int64_t>(), &CommOp::seq, &t.comms, false);
  same &=
      SetColumn(in->GetArray<int64_t>(), &CommOp::in_nelems, &t.comms, false);
  same &=
      SetColumn(in->GetArray<int64_t>(), &CommOp::out_nelems, &t.comms, false);
  same &=
      SetColumn(in->GetArray<int32_t>(), &CommOp::group_size, &t.comms, false);
  same &= SetColumn(in->GetArray<int32_t>(), &CommOp::peer, &t.comms, false);
  same &=
      SetColumn(in->GetArray<uint8_t>(), &CommOp::async_post, &t.comms, false);

  same &=
      SetColumn(in->GetArray<HostKind>(), &HostSpan::kind, &t.host_spans, true);
  same &= SetColumn(in->GetArray<int64_t>(), &HostSpan::start_ns, &t.host_spans,
                    false);
  same &= SetColumn(in->GetArray<int64_t>(), &HostSpan::end_ns, &t.host_spans,
                    false);

  same &= SetColumn(in->GetArray<int64_t>(), &InputShape::start_ns,
                    &t.input_shapes, true);
  same &= SetColumn(in->GetArray<uint32_t>(), &InputShape::name,
                    &t.input_shapes, false);
  same &= SetColumn(in->GetArray<uint32_t>(), &InputShape::first,
                    &t.input_shapes, false);
  same &= SetColumn(in->GetArray<uint32_t>(), &InputShape::count,
                    &t.input_shapes, false);
  t.input_numels = in->GetArray<int64_t>();

  t.events = in->Get<int64_t>();
  const auto skipped = in->Get<uint64_t>();
  for (uint64_t k = 0; in->ok() && k < skipped; ++k) {
    std::string what = GetString(in);
    const auto count = in->Get<int64_t>();
    t.skipped.emplace_back(std::move(what), count);
  }
  t.warnings = GetStrings(in);
  if (!in->ok()) return Internal("UnpackRankTrace: damaged bytes");
  const size_t rows = t.start_ns.size();
  for (const size_t n : {t.dur_ns.size(), t.launch_ns.size(), t.stream.size(),
                         t.comm.size(), t.name.size()}) {
    same &= n == rows;
  }
  same &= t.launch_op.empty() || t.launch_op.size() == rows;
  if (!same) return Internal("UnpackRankTrace: columns of different lengths");
  return t;
}

}  // namespace strag::trace
