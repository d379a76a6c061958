// SPDX-License-Identifier: Apache-2.0
// RankTable: the online detector's topology. Global ranks map to dense
// indexes (in order of first appearance, so iteration is deterministic);
// each rank sits in a cell, the (PP stage, DP replica) pair whose TP
// members are collapsed into one peer-group member; cells of one PP stage
// form a peer group ("stage", dense index). Updated on registration only,
// never per step.

#ifndef STRAG_SRC_DIAGNOSE_ONLINE_RANK_TABLE_H_
#define STRAG_SRC_DIAGNOSE_ONLINE_RANK_TABLE_H_

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "diagnose/online/online_detector.h"

namespace strag::diagnose::online {

class RankTable {
 public:
  // Ranks outside [0, kMaxRank] are bad input and are not registered.
  static constexpr int32_t kMaxRank = (1 << 24) - 1;

  explicit RankTable(int32_t gpus_per_node) : gpus_per_node_(gpus_per_node) {}

  // The dense index of `rank`, registering it with the default place (pp
  // 0, dp = rank, tp 0) when new; -1 for a rank out of range.
  int32_t Intern(int32_t rank);
  // Registers `place.rank` or moves it; unknown (-1) fields get defaults.
  // Returns its index, -1 for a rank out of range.
  int32_t SetPlace(const RankPlace& place);
  // The index of `rank`, -1 when not registered. O(1).
  int32_t Find(int32_t rank) const;

  int32_t num_ranks() const { return static_cast<int32_t>(places_.size()); }
  int32_t num_cells() const { return static_cast<int32_t>(cells_.size()); }
  int32_t num_stages() const { return static_cast<int32_t>(stage_pp_.size()); }

  const RankPlace& place(int32_t index) const { return places_[Ix(index)]; }
  int32_t cell_of(int32_t index) const { return cell_of_[Ix(index)]; }
  int32_t stage_of_cell(int32_t cell) const { return cells_[Ix(cell)].stage; }
  int32_t pp_of_stage(int32_t stage) const { return stage_pp_[Ix(stage)]; }
  int32_t cell_pp(int32_t cell) const { return cells_[Ix(cell)].pp; }
  int32_t cell_dp(int32_t cell) const { return cells_[Ix(cell)].dp; }
  // Rank indexes of a cell, by tp then rank.
  std::span<const int32_t> members(int32_t cell) const {
    return cells_[Ix(cell)].members;
  }
  // The rank index of member `m` of `cell` (clamped to the last member).
  int32_t Member(int32_t cell, int32_t m) const;
  // Position of rank index `index` in its cell's members.
  int32_t MemberPos(int32_t index) const;

  int32_t dp_size() const { return dp_size_; }  // max dp + 1
  int32_t pp_size() const { return pp_size_; }  // max pp + 1

  // "rank 2, PP stage 0, DP replica 2, node 0"; with TP members "rank 1843
  // in TP group 1840-1847, PP stage 3, DP replica 38, node 230".
  std::string Scope(int32_t index) const;
  // The smallest structure holding all `indexes` (rank < node < PP stage
  // or DP replica < job), with the ranks: "node 3 (ranks 24, 29)".
  std::string ScopeOf(std::span<const int32_t> indexes) const;

 private:
  struct Cell {
    int32_t pp = 0, dp = 0, stage = 0;
    std::vector<int32_t> members;
  };
  static size_t Ix(int32_t i) { return static_cast<size_t>(i); }
  RankPlace Complete(RankPlace p) const;
  int32_t CellFor(int32_t pp, int32_t dp);
  void Join(int32_t index);
  void Leave(int32_t index);

  int32_t gpus_per_node_;
  std::vector<int32_t> index_of_rank_;  // by global rank, -1: none
  std::vector<RankPlace> places_;
  std::vector<int32_t> cell_of_;
  std::vector<Cell> cells_;
  std::unordered_map<int64_t, int32_t> cell_by_key_;
  std::unordered_map<int32_t, int32_t> stage_by_pp_;
  std::vector<int32_t> stage_pp_;
  int32_t dp_size_ = 0, pp_size_ = 0;
};

}  // namespace strag::diagnose::online

#endif  // STRAG_SRC_DIAGNOSE_ONLINE_RANK_TABLE_H_
