// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/rank_trace_builder.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <new>
#include <stdexcept>
#include <type_traits>

#include "ingest/common/huge_pages.h"
#include "ingest/kineto/comm_nests.h"
#include "ingest/kineto/kineto_parser.h"
#include "ingest/kineto/time_text.h"

namespace strag::ingest::kineto {
namespace {

using Category = EventCategory;

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

// Kineto's categories; the capitalised ones are older Kineto's names. No
// category, or an empty one, is a CPU op (torch 1.13 writes none).
// Without a category (torch 1.13 CPU traces), an op is a namespaced
// operator ("aten::mm", "c10d::allreduce_", "autograd::engine::...") or an
// autograd node ("AddmmBackward0"); anything else is a record_function
// annotation ("DistributedDataParallel.forward", "enumerate(DataLoader)#...",
// a user's "gc.collect"): a container, whose time not covered by ops is host
// time, as torch 2.x marks it `user_annotation`.
bool LooksLikeOp(std::string_view name) {
  if (name.find("::") != std::string_view::npos) return true;
  size_t digits = 0;
  while (digits < name.size() && name[name.size() - 1 - digits] >= '0' &&
         name[name.size() - 1 - digits] <= '9') {
    ++digits;
  }
  return digits > 0 &&
         name.substr(0, name.size() - digits).ends_with("Backward");
}

Category CategoryOf(bool has_cat, std::string_view cat, std::string_view name) {
  if (!has_cat || cat.empty()) {
    return LooksLikeOp(name) || ProfilerStepId(name) ||
                   CpuCommFamilyOf(name) != CpuCommFamily::kNone
               ? Category::kCpuOp
               : Category::kUserAnnotation;
  }
  if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
      cat == "Kernel" || cat == "Memcpy" || cat == "Memset") {
    return Category::kGpuOp;
  }
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") {
    return Category::kLaunch;
  }
  if (cat == "cpu_op" || cat == "Operator") return Category::kCpuOp;
  if (cat == "user_annotation") return Category::kUserAnnotation;
  static constexpr std::array<std::string_view, 14> kIgnored = {
      "gpu_user_annotation",
      "python_function",
      "Trace",
      "cuda_profiler_range",
      "cpu_instant_event",
      "overhead",
      "ac2g",
      "fwdbwd",
      "async_cpu_to_gpu",
      "cuda_sync",
      "gpu_mem",
      "cpu_mem",
      "Python",
      "Memory"};
  for (std::string_view known : kIgnored) {
    if (EqualsNoCase(cat, known)) return Category::kIgnored;
  }
  return Category::kUnknown;
}

// A reason string with a bounded piece of `text` (a category or a phase),
// so that odd input cannot make the reasons huge.
std::string Quoted(std::string_view text) {
  std::string quoted(1, '\'');
  quoted.append(text.substr(0, 40));
  quoted += '\'';
  return quoted;
}

std::string PhaseReason(std::string_view ph) {
  if (ph.size() == 1) {
    switch (ph[0]) {
      case 'M':
        return "metadata (ph 'M')";
      case 's':
      case 't':
      case 'f':
        return "flow event (ph 's', 't', 'f')";
      case 'i':
      case 'I':
        return "instant event (ph 'i')";
      case 'C':
        return "counter (ph 'C')";
      case 'B':
      case 'E':
        return "begin / end event (ph 'B', 'E')";
      case 'b':
      case 'e':
      case 'n':
        return "async event (ph 'b', 'e', 'n')";
      default:
        break;
    }
  }
  return "phase " + Quoted(ph) + " (not read)";
}

}  // namespace

RankTraceBuilder::RankTraceBuilder(std::string_view source_name) {
  records_.source = std::string(source_name);
  records_.out.source = records_.source;
}

// Kineto traces hold one GPU op per 1.4-3 KB of JSON; a guess too large
// costs only address space (AdviseHugePages backs what is touched).
void RankTraceBuilder::Reserve(uint64_t text_bytes) {
  const size_t rows = static_cast<size_t>(text_bytes / 1024);
  if (rows < 4096) return;
  // The size may be a gzip trailer's claim: when the address space cannot
  // hold the guess, the columns just grow.
  bool reserved = true;
  const auto reserve = [rows, &reserved](auto& column) {
    ReserveColumn(rows, &reserved, &column);
  };
  trace::RankTrace& out = records_.out;
  reserve(out.start_ns);
  reserve(out.dur_ns);
  reserve(out.launch_ns);
  reserve(out.stream);
  reserve(out.comm);
  reserve(out.name);
  reserve(records_.row_correlation);
  reserve(records_.launches);
  reserve(records_.cpu_ops);
  if (!reserved) {  // gives back what was reserved (nothing is in yet)
    const auto release = [](auto& column) {
      std::remove_reference_t<decltype(column)>().swap(column);
    };
    release(out.start_ns);
    release(out.dur_ns);
    release(out.launch_ns);
    release(out.stream);
    release(out.comm);
    release(out.name);
    release(records_.row_correlation);
    release(records_.launches);
    release(records_.cpu_ops);
  }
}

bool RankTraceBuilder::NeedsArgs(std::string_view ph, std::string_view cat,
                                 std::string_view name) const {
  if (ph != "X") return false;
  // Without a category, the name does not count here (an event without
  // one needs args only when it is a comm op).
  const Category category = CategoryOf(!cat.empty(), cat, "");
  return category == Category::kGpuOp || category == Category::kLaunch ||
         category == Category::kCpuOp ||  // "Input Dims" (record_shapes)
         CpuCommFamilyOf(name) != CpuCommFamily::kNone;
}

// An integer id is itself; anything else (a string, a float) gets an id
// from kStringIdBase up, one per distinct text.
int64_t RankTraceBuilder::IdOf(const JsonId& id) {
  if (id.raw.empty()) return -1;
  int64_t number = 0;
  const char* end = id.raw.data() + id.raw.size();
  const auto [ptr, ec] = std::from_chars(id.raw.data(), end, number);
  if (ec == std::errc() && ptr == end) return number;
  const auto it = string_ids_.find(id.raw);
  if (it != string_ids_.end()) return it->second;
  const int64_t value =
      kStringIdBase + static_cast<int64_t>(string_ids_.size());
  string_ids_.emplace(std::string(id.raw), value);
  return value;
}

ThreadKey RankTraceBuilder::ThreadOf(const KinetoEvent& event) {
  return {IdOf(event.pid), IdOf(event.tid)};
}

Status RankTraceBuilder::Add(const KinetoEvent& event) {
  ++records_.out.events;
  const std::optional<Category> category = CompleteEventCategory(event);
  if (!category) return Status::Ok();
  int64_t ts = 0;
  int64_t dur = 0;
  if (!Times(event, &ts, &dur)) return Status::Ok();
  switch (*category) {
    case Category::kGpuOp:
      AddGpuOp(event, ts, dur);
      break;
    case Category::kLaunch:
      if (event.has_correlation) {
        records_.launches.push_back({event.correlation, ts, ThreadOf(event)});
      } else {
        records_.Skip("runtime call without correlation");
      }
      break;
    default:
      AddCpuSide(event, *category == Category::kCpuOp, ts, ts + dur);
      break;
  }
  return Status::Ok();
}

// The category of a complete ("X") event that may be used; nullopt (and
// counted) for anything else.
std::optional<Category> RankTraceBuilder::CompleteEventCategory(
    const KinetoEvent& event) {
  if (!event.is_object) {
    records_.Skip("not an object");
    return std::nullopt;
  }
  if (!event.has_ph) {
    records_.Skip("no ph");
    return std::nullopt;
  }
  if (event.ph != "X") {
    if (event.ph.size() == 1) {
      ++phases_[static_cast<unsigned char>(event.ph[0])];
    } else {
      records_.Skip(PhaseReason(event.ph));
    }
    return std::nullopt;
  }
  const Category category = CategoryOf(event.has_cat, event.cat, event.name);
  if (category == Category::kIgnored && event.cat == "python_function") {
    AddHostSpan(event);  // e.g. a gc event of the Python tracer
  }
  if (category == Category::kIgnored || category == Category::kUnknown) {
    CountCategory(
        category == Category::kIgnored ? &categories_ : &unknown_categories_,
        event.cat);
    return std::nullopt;
  }
  return category;
}

// ts and dur in ns, when both are numbers, dur >= 0 and ts + dur fits.
bool RankTraceBuilder::Times(const KinetoEvent& event, int64_t* ts,
                             int64_t* dur) {
  const std::optional<int64_t> start = MicrosTextToNanos(event.ts);
  const std::optional<int64_t> length = MicrosTextToNanos(event.dur);
  if (!start || !length) {
    const bool absent = !start ? event.ts.empty() : event.dur.empty();
    records_.Skip(std::string(!start ? "ts" : "dur") +
                  (absent ? " missing" : " is not a number in range"));
    return false;
  }
  if (*length < 0) {
    NegativeDuration(event);
    return false;
  }
  int64_t end = 0;
  if (__builtin_add_overflow(*start, *length, &end)) {
    records_.Skip("ts + dur out of range");
    return false;
  }
  *ts = *start;
  *dur = *length;
  return true;
}

// At most kMaxCategories names each: odd input cannot make the counts
// huge.
void RankTraceBuilder::CountCategory(
    std::map<std::string, int64_t, std::less<>>* counts,
    std::string_view category) {
  constexpr size_t kMaxCategories = 100;
  auto it = counts->find(category);
  if (it == counts->end()) {
    const std::string key = counts->size() < kMaxCategories
                                ? std::string(category.substr(0, 40))
                                : std::string("(others)");
    it = counts->try_emplace(key, 0).first;
  }
  ++it->second;
}

void RankTraceBuilder::NegativeDuration(const KinetoEvent& event) {
  records_.Skip("negative dur");
  constexpr int64_t kListed = 10;
  if (++negative_durations_ > kListed) return;
  records_.out.warnings.push_back(
      records_.source + ": byte " + std::to_string(event.offset) + ": event '" +
      std::string(event.name.substr(0, 200)) + "' has a negative duration (" +
      std::string(event.dur.substr(0, 40)) + " us): skipped");
}

CommDetails RankTraceBuilder::DetailsFromArgs(const CommArgs& args) {
  CommDetails details;
  if (const auto kind = CollectiveFromName(args.collective)) {
    details.has_kind = true;
    details.kind = *kind;
  }
  details.in_nelems = args.in_nelems;
  details.out_nelems = args.out_nelems;
  details.seq = args.seq;
  details.dst_rank = args.dst_rank;
  details.src_rank = args.src_rank;
  if (args.group_size > 0 &&
      args.group_size <= std::numeric_limits<int32_t>::max()) {
    details.group_size = static_cast<int32_t>(args.group_size);
  }
  std::string group_name(args.group_name);
  if (group_name.empty() && args.group_id >= 0) {
    group_name = std::to_string(args.group_id);
  }
  if (!group_name.empty()) {
    details.group =
        records_.GroupIndex(group_name, args.group_desc,
                            args.has_ranks ? &args.group_ranks : nullptr);
  }
  return details;
}

void RankTraceBuilder::AddGpuOp(const KinetoEvent& event, int64_t ts,
                                int64_t dur) {
  trace::RankTrace& out = records_.out;
  const size_t row = out.size();
  out.start_ns.push_back(ts);
  out.dur_ns.push_back(dur);
  out.launch_ns.push_back(-1);
  out.stream.push_back(
      records_.StreamId(event.has_stream ? event.stream : IdOf(event.tid)));
  out.comm.push_back(-1);
  out.name.push_back(records_.Intern(event.name));
  records_.row_correlation.push_back(event.has_correlation ? event.correlation
                                                           : -1);
  if (IsNcclKernel(event.name)) {
    NcclKernel kernel{row, DetailsFromArgs(event.comm)};
    if (const auto kind = NcclKernelCollective(event.name)) {
      kernel.details.has_kind = true;  // the kernel's name wins
      kernel.details.kind = *kind;
    }
    records_.nccl_kernels.push_back(kernel);
  }
  if (!records_.seen_gpu_op) {
    // A GPU trace: its rows are GPU ops, the CPU ops are not needed.
    records_.seen_gpu_op = true;
    records_.candidates = {};
    top_level_.clear();
  }
}

// At most kMaxInputShapes ops per rank: shapes feed a per-step token
// measure, which the first few million ops of a rank settle.
void RankTraceBuilder::AddInputShape(const KinetoEvent& event, int64_t ts) {
  constexpr size_t kMaxInputShapes = size_t{1} << 22;
  trace::RankTrace& out = records_.out;
  if (out.input_shapes.size() >= kMaxInputShapes) {
    records_.Skip("Input Dims beyond the first 4,194,304 ops (not read)");
    return;
  }
  out.input_shapes.push_back(
      {ts, records_.Intern(event.name),
       static_cast<uint32_t>(out.input_numels.size()),
       static_cast<uint32_t>(event.input_numels.size())});
  out.input_numels.insert(out.input_numels.end(), event.input_numels.begin(),
                          event.input_numels.end());
}

void RankTraceBuilder::AddCpuSide(const KinetoEvent& event, bool is_cpu_op,
                                  int64_t ts, int64_t end) {
  const ThreadKey thread = ThreadOf(event);
  if (const auto step = ProfilerStepId(event.name)) {
    records_.steps.push_back({{*step, ts, end}, thread});
    return;
  }
  const CpuCommFamily family = CpuCommFamilyOf(event.name);
  // Any cpu_op may be the one that launches a kernel (the trace's GPU ops
  // may come later in the file); a gloo op's span is no caller's.
  if (is_cpu_op && family != CpuCommFamily::kGloo) {
    records_.cpu_ops.push_back(
        {ts, end, records_.ThreadIndex(thread), records_.Intern(event.name)});
  }
  if (family != CpuCommFamily::kNone) {
    CpuCommOp op{thread, ts, end, family, records_.Intern(event.name), {}};
    op.details = DetailsFromArgs(event.comm);
    if (const auto kind = CpuCommCollective(event.name)) {
      op.details.has_kind = true;  // the op's name wins over its args
      op.details.kind = *kind;
    }
    records_.comm_ops.push_back(op);
    if (family == CpuCommFamily::kGloo) ++gloo_ops_;
  } else if (is_cpu_op) {
    ++records_.cpu_plain;
    if (event.has_input_dims) AddInputShape(event, ts);
  } else {
    ++annotations_;
    AddHostSpan(event);
    return;
  }
  if (is_cpu_op && !records_.seen_gpu_op) {
    AddCandidate(thread, ts, end, event.name, family != CpuCommFamily::kNone);
  }
}

void RankTraceBuilder::AddHostSpan(const KinetoEvent& event) {
  const std::optional<trace::HostKind> kind = HostKindOf(event.name);
  int64_t ts = 0, dur = 0;
  if (!kind || !Times(event, &ts, &dur)) return;
  records_.out.host_spans.push_back({*kind, ts, ts + dur});
}

void RankTraceBuilder::AddCandidate(const ThreadKey& thread, int64_t ts,
                                    int64_t end, std::string_view name,
                                    bool is_comm) {
  // Comm ops neither hide the ops in their span nor are hidden (an isend's
  // gloo span lasts until its wait()); AddComputeRows sorts them out.
  if (is_comm) {
    records_.candidates.push_back(
        {thread, ts, end, records_.Intern(name), true});
    return;
  }
  auto [it, added] = top_level_.try_emplace(thread, ts, end);
  if (!added) {
    auto& [top_start, top_end] = it->second;
    if (ts >= top_start && (ts < top_end || ts == top_start)) return;  // nested
    if (ts >= top_start) it->second = {ts, end};
  }
  records_.candidates.push_back(
      {thread, ts, end, records_.Intern(name), is_comm});
}

Status RankTraceBuilder::SetRank(const KinetoMetadata& meta,
                                 int32_t default_rank) {
  trace::RankTrace& out = records_.out;
  out.world_size = meta.has_world_size ? meta.world_size : 0;
  out.backend = meta.backend;
  if (meta.has_rank) {
    out.rank = meta.rank;
  } else if (const auto rank = RankFromFileName(records_.source)) {
    out.rank = *rank;
  } else if (default_rank >= 0) {
    out.rank = default_rank;
    out.warnings.push_back(records_.source +
                           ": no rank in distributedInfo or in the file "
                           "name: taken as rank " +
                           std::to_string(default_rank));
  } else if (default_rank == KinetoOptions::kRankLater) {
    out.rank = -1;
    return Status::Ok();
  } else {
    return InvalidInput(records_.source +
                        ": no rank: the trace has no distributedInfo.rank and "
                        "the file name no 'rank<N>'");
  }
  if (out.rank < 0 || (out.world_size > 0 && out.rank >= out.world_size)) {
    return InvalidInput(records_.source + ": rank " + std::to_string(out.rank) +
                        " is not in [0, world size " +
                        std::to_string(out.world_size) + ")");
  }
  return Status::Ok();
}

Result<trace::RankTrace> RankTraceBuilder::Finish(const KinetoMetadata& meta,
                                                  int32_t default_rank) {
  RETURN_IF_ERROR(SetRank(meta, default_rank));
  for (const trace::ProcessGroupInfo& group : meta.pg_config) {
    records_.GroupIndex(group.name, group.desc, &group.ranks);
  }
  const CommNests nests(std::move(records_.comm_ops));
  records_.out.cpu_only = !records_.seen_gpu_op;
  if (records_.seen_gpu_op) {
    LinkGpuOps(nests, &records_);
  } else {
    records_.cpu_ops = {};
    BuildCpuOnlyRows(nests, &records_);
  }
  Account();
  trace::RankTrace& out = records_.out;
  for (trace::CommOp& comm : out.comms) {
    if (comm.group_size == 0 && comm.group >= 0) {
      comm.group_size = static_cast<int32_t>(
          out.groups[static_cast<size_t>(comm.group)].ranks.size());
    }
  }
  for (const StepRecord& step : records_.steps) out.steps.push_back(step.span);
  std::stable_sort(out.steps.begin(), out.steps.end(),
                   [](const trace::StepSpan& a, const trace::StepSpan& b) {
                     return a.start_ns != b.start_ns ? a.start_ns < b.start_ns
                                                     : a.id < b.id;
                   });
  if (meta.has_base_time) ApplyBaseTime(meta.base_time_ns);
  // Epoch-scale times (after 1973) are a wall clock too.
  constexpr int64_t kEpochScaleNs = int64_t{100'000'000} * 1'000'000'000;
  out.absolute_clock =
      meta.has_base_time ||
      (!out.steps.empty() && out.steps.front().start_ns >= kEpochScaleNs);
  CompactNames();
  return std::move(records_.out);
}

// Events read but not turned into rows, by reason, and the warnings that
// sum them up.
void RankTraceBuilder::Account() {
  trace::RankTrace& out = records_.out;
  if (records_.seen_gpu_op) {
    records_.Skip("CPU op (a GPU trace: its rows are GPU ops)",
                  records_.cpu_plain);
    records_.Skip("gloo op (a GPU trace: its rows are GPU ops)", gloo_ops_);
  }
  records_.Skip("user annotation", annotations_);
  for (size_t ph = 0; ph < phases_.size(); ++ph) {
    records_.Skip(PhaseReason(std::string(1, static_cast<char>(ph))),
                  phases_[ph]);
  }
  for (const auto& [category, count] : categories_) {
    records_.Skip("category " + Quoted(category), count);
  }
  for (const auto& [category, count] : unknown_categories_) {
    records_.Skip("unknown category " + Quoted(category), count);
  }
  if (negative_durations_ > 10) {
    out.warnings.push_back(records_.source + ": " +
                           std::to_string(negative_durations_ - 10) +
                           " more events with a negative duration skipped");
  }
  for (const auto& [reason, count] : records_.skipped) {
    out.skipped.emplace_back(reason, count);
  }
}

// Kineto's ts count from baseTimeNanoseconds (written since 2023): adding
// it gives each rank's own wall clock, so ranks start out roughly aligned.
void RankTraceBuilder::ApplyBaseTime(int64_t base_ns) {
  trace::RankTrace& out = records_.out;
  const auto shift = [&](int64_t* t) {
    int64_t shifted = 0;
    if (__builtin_add_overflow(*t, base_ns, &shifted)) return false;
    *t = shifted;
    return true;
  };
  bool ok = true;
  for (int64_t& t : out.start_ns) ok = shift(&t) && ok;
  for (int64_t& t : out.launch_ns) {
    if (t >= 0) ok = shift(&t) && ok;
  }
  for (trace::StepSpan& step : out.steps) {
    ok = shift(&step.start_ns) && ok;
    ok = shift(&step.end_ns) && ok;
  }
  for (trace::HostSpan& span : out.host_spans) {
    ok = shift(&span.start_ns) && ok;
    ok = shift(&span.end_ns) && ok;
  }
  for (trace::InputShape& shape : out.input_shapes) {
    ok = shift(&shape.start_ns) && ok;
  }
  if (!ok) {
    out.warnings.push_back(records_.source +
                           ": baseTimeNanoseconds overflows some timestamps");
  }
}

// Keeps only the names of rows, in order of first use by a row, then
// those of launching CPU ops, then those of input shapes.
void RankTraceBuilder::CompactNames() {
  trace::RankTrace& out = records_.out;
  std::vector<int64_t> remap(out.names.size(), -1);
  std::vector<std::string> names;
  const auto keep = [&](uint32_t* name) {
    if (remap[*name] < 0) {
      remap[*name] = static_cast<int64_t>(names.size());
      names.push_back(std::move(out.names[*name]));
    }
    *name = static_cast<uint32_t>(remap[*name]);
  };
  for (uint32_t& name : out.name) keep(&name);
  for (uint32_t& op : out.launch_op) {
    if (op != trace::RankTrace::kNoLaunchOp) keep(&op);
  }
  for (trace::InputShape& shape : out.input_shapes) keep(&shape.name);
  out.names = std::move(names);
}

}  // namespace strag::ingest::kineto
