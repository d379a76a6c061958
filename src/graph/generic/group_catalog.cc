// SPDX-License-Identifier: Apache-2.0
#include "graph/generic/group_catalog.h"

#include <algorithm>
#include <map>
#include <set>

namespace strag::graph {
namespace {

std::vector<int32_t> SortedUnique(std::vector<int32_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The key and rank list of every group reference, and the catalog built from
// them in order of first appearance (rank index, then trace group index).
class CatalogBuilder {
 public:
  CatalogBuilder(std::span<const trace::RankTrace* const> traces,
                 std::span<const int32_t> ranks)
      : traces_(traces), ranks_(ranks) {}

  GroupCatalog Build();

 private:
  void CollectNamedLists();
  int32_t Intern(const trace::ProcessGroupInfo& info);
  void ResolveMembers();
  void MarkSeqAndUse();

  std::span<const trace::RankTrace* const> traces_;
  std::span<const int32_t> ranks_;
  std::map<std::string, std::set<std::vector<int32_t>>> lists_of_name_;
  std::map<std::string, int32_t> id_of_key_;
  std::vector<std::vector<int32_t>> listed_;  // per group: global ranks
  std::vector<std::set<int32_t>> used_by_;    // per group: rank indices
  GroupCatalog out_;
};

void CatalogBuilder::CollectNamedLists() {
  for (const trace::RankTrace* t : traces_) {
    for (const trace::ProcessGroupInfo& g : t->groups) {
      if (!g.name.empty() && !g.ranks.empty()) {
        lists_of_name_[g.name].insert(SortedUnique(g.ranks));
      }
    }
  }
}

int32_t CatalogBuilder::Intern(const trace::ProcessGroupInfo& info) {
  std::vector<int32_t> list = SortedUnique(info.ranks);
  std::string key, label;
  if (info.name.empty() && list.empty()) {
    key = "default";
  } else if (info.name.empty()) {
    key = "ranks " + FormatRanks(list);
    label = "group of ranks " + FormatRanks(list);
  } else {
    const auto& lists = lists_of_name_[info.name];
    if (list.empty() && lists.size() == 1) list = *lists.begin();
    key = "name " + info.name;
    if (lists.size() > 1) key += " ranks " + FormatRanks(list);
    label = "group '" + info.name + "'" +
            (info.desc.empty() ? "" : " (" + info.desc + ")");
    if (!list.empty()) label += " of ranks " + FormatRanks(list);
  }
  auto [it, inserted] =
      id_of_key_.emplace(key, static_cast<int32_t>(out_.groups.size()));
  if (inserted) {
    out_.groups.push_back(
        {key == "default" ? "the default group (all ranks)" : label,
         {},
         {},
         true});
    listed_.push_back(key == "default"
                          ? std::vector<int32_t>(ranks_.begin(), ranks_.end())
                          : list);
    used_by_.emplace_back();
  }
  return it->second;
}

void CatalogBuilder::ResolveMembers() {
  for (size_t g = 0; g < out_.groups.size(); ++g) {
    GroupCatalog::Group& group = out_.groups[g];
    if (listed_[g].empty()) {  // named, no rank list: the ranks seen using it
      group.members.assign(used_by_[g].begin(), used_by_[g].end());
      continue;
    }
    for (int32_t r : listed_[g]) {
      auto it = std::lower_bound(ranks_.begin(), ranks_.end(), r);
      if (it != ranks_.end() && *it == r) {
        group.members.push_back(static_cast<int32_t>(it - ranks_.begin()));
      } else {
        group.absent.push_back(r);
      }
    }
  }
}

void CatalogBuilder::MarkSeqAndUse() {
  for (size_t r = 0; r < traces_.size(); ++r) {
    for (const trace::CommOp& op : traces_[r]->comms) {
      const auto g = static_cast<size_t>(out_.Of(r, op.group));
      used_by_[g].insert(static_cast<int32_t>(r));
      if (!trace::IsP2p(op.kind) && op.seq < 0) out_.groups[g].use_seq = false;
    }
  }
}

GroupCatalog CatalogBuilder::Build() {
  CollectNamedLists();
  out_.of_rank.resize(traces_.size());
  for (size_t r = 0; r < traces_.size(); ++r) {
    out_.of_rank[r].push_back(Intern(trace::ProcessGroupInfo{}));
    for (const trace::ProcessGroupInfo& g : traces_[r]->groups) {
      out_.of_rank[r].push_back(Intern(g));
    }
  }
  MarkSeqAndUse();
  ResolveMembers();
  return std::move(out_);
}

}  // namespace

int32_t GroupCatalog::Of(size_t rank_index, int32_t trace_group) const {
  const std::vector<int32_t>& slots = of_rank[rank_index];
  const auto slot = static_cast<size_t>(trace_group) + 1;
  return trace_group >= 0 && slot < slots.size() ? slots[slot] : slots[0];
}

GroupCatalog BuildGroupCatalog(std::span<const trace::RankTrace* const> traces,
                               std::span<const int32_t> ranks) {
  return CatalogBuilder(traces, ranks).Build();
}

std::string FormatRanks(std::span<const int32_t> ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace strag::graph
