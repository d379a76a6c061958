// SPDX-License-Identifier: Apache-2.0
#include "diagnose/online/rank_table.h"

#include <algorithm>

#include "base/str_format.h"

namespace strag::diagnose::online {

RankPlace RankTable::Complete(RankPlace p) const {
  if (p.pp < 0) p.pp = 0;
  if (p.dp < 0) p.dp = p.rank;
  if (p.tp < 0) p.tp = 0;
  if (p.node < 0) p.node = p.rank / std::max(1, gpus_per_node_);
  return p;
}

int32_t RankTable::Find(int32_t rank) const {
  if (rank < 0 || static_cast<size_t>(rank) >= index_of_rank_.size()) {
    return -1;
  }
  return index_of_rank_[Ix(rank)];
}

int32_t RankTable::Intern(int32_t rank) {
  const int32_t found = Find(rank);
  if (found >= 0) return found;
  return SetPlace(RankPlace{rank, -1, -1, -1, -1});
}

int32_t RankTable::CellFor(int32_t pp, int32_t dp) {
  const int64_t key =
      (static_cast<int64_t>(pp) << 32) | static_cast<uint32_t>(dp);
  const auto [it, fresh] = cell_by_key_.try_emplace(key, num_cells());
  if (!fresh) return it->second;
  const auto [st, new_stage] = stage_by_pp_.try_emplace(pp, num_stages());
  if (new_stage) stage_pp_.push_back(pp);
  cells_.push_back(Cell{pp, dp, st->second, {}});
  dp_size_ = std::max(dp_size_, dp + 1);
  pp_size_ = std::max(pp_size_, pp + 1);
  return it->second;
}

void RankTable::Join(int32_t index) {
  const RankPlace& p = places_[Ix(index)];
  const int32_t cell = CellFor(p.pp, p.dp);
  cell_of_[Ix(index)] = cell;
  std::vector<int32_t>& m = cells_[Ix(cell)].members;
  const auto pos =
      std::lower_bound(m.begin(), m.end(), index, [&](int32_t a, int32_t b) {
        const RankPlace &pa = places_[Ix(a)], &pb = places_[Ix(b)];
        return pa.tp != pb.tp ? pa.tp < pb.tp : pa.rank < pb.rank;
      });
  m.insert(pos, index);
}

void RankTable::Leave(int32_t index) {
  std::vector<int32_t>& m = cells_[Ix(cell_of_[Ix(index)])].members;
  m.erase(std::find(m.begin(), m.end(), index));
}

int32_t RankTable::SetPlace(const RankPlace& given) {
  if (given.rank < 0 || given.rank > kMaxRank) return -1;
  const RankPlace p = Complete(given);
  int32_t index = Find(p.rank);
  if (index < 0) {
    if (index_of_rank_.size() <= Ix(p.rank)) {
      index_of_rank_.resize(Ix(p.rank) + 1, -1);
    }
    index = num_ranks();
    index_of_rank_[Ix(p.rank)] = index;
    places_.push_back(p);
    cell_of_.push_back(-1);
    Join(index);
    return index;
  }
  RankPlace& old = places_[Ix(index)];
  const bool moved = old.pp != p.pp || old.dp != p.dp || old.tp != p.tp;
  if (moved) Leave(index);
  old = p;
  if (moved) Join(index);
  return index;
}

int32_t RankTable::Member(int32_t cell, int32_t m) const {
  const std::vector<int32_t>& v = cells_[Ix(cell)].members;
  if (v.empty()) return -1;
  return v[std::min(Ix(std::max(m, 0)), v.size() - 1)];
}

int32_t RankTable::MemberPos(int32_t index) const {
  const std::vector<int32_t>& v = cells_[Ix(cell_of_[Ix(index)])].members;
  return static_cast<int32_t>(std::find(v.begin(), v.end(), index) - v.begin());
}

std::string RankTable::Scope(int32_t index) const {
  const RankPlace& p = places_[Ix(index)];
  const std::span<const int32_t> m = members(cell_of(index));
  std::string tp;
  if (m.size() > 1) {
    int32_t lo = p.rank, hi = p.rank;
    for (int32_t i : m) {
      lo = std::min(lo, places_[Ix(i)].rank);
      hi = std::max(hi, places_[Ix(i)].rank);
    }
    tp = StrFormat(" in TP group %d-%d", lo, hi);
  }
  return StrFormat("rank %d%s, PP stage %d, DP replica %d, node %d", p.rank,
                   tp.c_str(), p.pp, p.dp, p.node);
}

std::string RankTable::ScopeOf(std::span<const int32_t> indexes) const {
  if (indexes.empty()) return "job";
  if (indexes.size() == 1) return Scope(indexes.front());
  const RankPlace& first = places_[Ix(indexes.front())];
  bool node = true, pp = true, dp = true;
  std::string ranks;
  constexpr size_t kListed = 8;
  for (size_t k = 0; k < indexes.size(); ++k) {
    const RankPlace& p = places_[Ix(indexes[k])];
    node &= p.node == first.node;
    pp &= p.pp == first.pp;
    dp &= p.dp == first.dp;
    if (k < kListed) ranks += (k ? ", " : "") + std::to_string(p.rank);
  }
  if (indexes.size() > kListed) ranks += ", ...";
  const std::string list = " (ranks " + ranks + ")";
  if (node) return StrFormat("node %d", first.node) + list;
  if (pp) return StrFormat("PP stage %d", first.pp) + list;
  if (dp) return StrFormat("DP replica %d", first.dp) + list;
  return "job" + list;
}

}  // namespace strag::diagnose::online
