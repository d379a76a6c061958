// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/trace_records.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace strag::ingest::kineto {
namespace {

constexpr int32_t kFirstMappedStream = int32_t{1} << 30;

}  // namespace

void CommDetails::Fill(const CommDetails& other) {
  if (!has_kind && other.has_kind) {
    has_kind = true;
    kind = other.kind;
  }
  if (group < 0) group = other.group;
  if (seq < 0) seq = other.seq;
  if (in_nelems < 0) in_nelems = other.in_nelems;
  if (out_nelems < 0) out_nelems = other.out_nelems;
  if (group_size <= 0) group_size = other.group_size;
  if (dst_rank < 0) dst_rank = other.dst_rank;
  if (src_rank < 0) src_rank = other.src_rank;
}

// PyTorch writes "Dst Rank" for a send and "Src Rank" for a recv; a kernel
// of unknown kind takes whichever is there.
int32_t CommDetails::Peer() const {
  int64_t peer = -1;
  if (has_kind && kind == trace::OpType::kSend) {
    peer = dst_rank;
  } else if (has_kind && kind == trace::OpType::kRecv) {
    peer = src_rank;
  } else if ((dst_rank >= 0) != (src_rank >= 0)) {
    peer = std::max(dst_rank, src_rank);
  }
  return peer >= 0 && peer <= std::numeric_limits<int32_t>::max()
             ? static_cast<int32_t>(peer)
             : -1;
}

uint32_t TraceRecords::Intern(std::string_view name) {
  uint64_t head = 0;
  uint64_t tail = 0;
  if (name.size() >= 8) {
    std::memcpy(&head, name.data(), 8);
    std::memcpy(&tail, name.data() + name.size() - 8, 8);
  } else {
    for (const char c : name) head = head << 8 | static_cast<unsigned char>(c);
  }
  const uint64_t fingerprint =
      ((head * 0x9e3779b97f4a7c15) ^ tail ^ name.size()) * 0xff51afd7ed558ccd;
  uint32_t& recent = recent_names_[fingerprint >> 58];
  if (recent != 0 && out.names[recent - 1] == name) return recent - 1;
  const auto found = name_index_.find(name);
  if (found != name_index_.end()) {
    recent = found->second + 1;
    return found->second;
  }
  const auto index = static_cast<uint32_t>(out.names.size());
  name_index_.emplace(std::string(name), index);
  out.names.emplace_back(name);
  recent = index + 1;
  return index;
}

int32_t TraceRecords::GroupIndex(std::string_view name, std::string_view desc,
                                 const std::vector<int32_t>* ranks) {
  const auto [it, added] = group_index_.try_emplace(
      std::string(name), static_cast<int32_t>(out.groups.size()));
  if (added) out.groups.push_back({std::string(name), {}, {}});
  trace::ProcessGroupInfo& group = out.groups[static_cast<size_t>(it->second)];
  if (group.desc.empty()) group.desc = std::string(desc);
  if (group.ranks.empty() && ranks != nullptr) group.ranks = *ranks;
  return it->second;
}

int32_t TraceRecords::StreamId(int64_t id) {
  if (id >= 0 && id < kFirstMappedStream) return static_cast<int32_t>(id);
  const auto [it, added] = big_streams_.try_emplace(
      id, kFirstMappedStream + static_cast<int32_t>(big_streams_.size()));
  return it->second;
}

uint32_t TraceRecords::ThreadIndex(const ThreadKey& thread) {
  // CPU ops come in runs of one thread: most calls are the last one's.
  if (last_thread_index_ != UINT32_MAX && thread == last_thread_) {
    return last_thread_index_;
  }
  const auto [it, added] = thread_index_.try_emplace(
      thread, static_cast<uint32_t>(thread_index_.size()));
  last_thread_ = thread;
  last_thread_index_ = it->second;
  return it->second;
}

int64_t TraceRecords::FindThreadIndex(const ThreadKey& thread) const {
  const auto it = thread_index_.find(thread);
  return it == thread_index_.end() ? -1 : int64_t{it->second};
}

trace::CommOp CommDetails::ToCommOp() const {
  trace::CommOp op;
  op.kind = has_kind ? kind : trace::OpType::kOtherComm;
  op.group = group;
  op.seq = seq;
  op.in_nelems = in_nelems;
  op.out_nelems = out_nelems;
  op.group_size = group_size;
  op.peer = Peer();
  return op;
}

void TraceRecords::Skip(const std::string& reason, int64_t count) {
  if (count > 0) skipped[reason] += count;
}

}  // namespace strag::ingest::kineto
