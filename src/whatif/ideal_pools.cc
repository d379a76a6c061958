// SPDX-License-Identifier: Apache-2.0
#include "whatif/ideal_pools.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/check.h"
#include "base/f32.h"
#include "base/median.h"
#include "base/parallel_for.h"

namespace strag::whatif {
namespace {

using graph::NodeId;

// Pool index of every node under `pool`.
std::vector<size_t> PoolOfNodes(const PreparedTrace& t, IdealPool pool) {
  std::map<std::pair<int, int32_t>, size_t> ids;
  std::vector<size_t> out(t.num_nodes());
  for (NodeId v = 0; v < t.num_nodes(); ++v) {
    const graph::OpKey& k = t.model.keys[v];
    const int type = static_cast<int>(k.type);
    switch (pool) {
      case IdealPool::kOpType:
        out[v] = ids.emplace(std::pair{type, 0}, ids.size()).first->second;
        break;
      case IdealPool::kOpTypeStage:
        out[v] =
            ids.emplace(std::pair{type, k.stage}, ids.size()).first->second;
        break;
      case IdealPool::kOp:
        out[v] = v;
        break;
      case IdealPool::kRole:  // handled by RoleIdealCosts
      case IdealPool::kPosition:
        out[v] =
            ids.emplace(std::pair{type, k.seq_id}, ids.size()).first->second;
        break;
    }
  }
  return out;
}

}  // namespace

void MedianValues::Add(double x) {
  if (!wide_ && static_cast<double>(static_cast<float>(x)) == x) {
    f32_.push_back(static_cast<float>(x));
    return;
  }
  if (!wide_) {
    wide_ = true;
    f64_.assign(f32_.begin(), f32_.end());
    f32_ = {};
  }
  f64_.push_back(x);
}

// Binary32 values order as their binary64 values do, so the middle ones
// are the same and are averaged in binary64 as Median does.
double MedianValues::Take() {
  if (wide_) return Median(&f64_);
  if (f32_.empty()) return 0.0;
  const size_t mid = f32_.size() / 2;
  std::nth_element(f32_.begin(), f32_.begin() + static_cast<ptrdiff_t>(mid),
                   f32_.end());
  const auto hi = static_cast<double>(f32_[mid]);
  if (f32_.size() % 2 == 1) return hi;
  const auto lo = static_cast<double>(*std::max_element(
      f32_.begin(), f32_.begin() + static_cast<ptrdiff_t>(mid)));
  return (lo + hi) / 2.0;
}

void MedianValues::Export(BytePacker* out) const {
  out->Put<uint8_t>(wide_ ? 1 : 0);
  if (wide_) {
    out->PutArray<double>(f64_);
  } else {
    out->PutArray<float>(f32_);
  }
}

Status MedianValues::Merge(ByteUnpacker* in) {
  const bool wide = in->Get<uint8_t>() != 0;
  if (wide) {
    for (double x : in->GetArray<double>()) Add(x);
  } else {
    for (float x : in->GetArray<float>()) Add(x);
  }
  return in->ok() ? Status::Ok()
                  : Internal("MedianValues::Merge: damaged bytes");
}

IdealPools::IdealPools(const PreparedTrace& shape, IdealPool pool)
    : shape_(shape) {
  STRAG_CHECK(pool != IdealPool::kRole, "IdealPools: kRole is not pooled");
  const std::vector<size_t> pool_of = PoolOfNodes(shape, pool);
  const size_t num_pools =
      pool_of.empty() ? 0
                      : *std::max_element(pool_of.begin(), pool_of.end()) + 1;
  pools_.resize(2 * num_pools);
  pool_of_.resize(shape.num_nodes());
  position_.resize(shape.num_nodes());
  std::vector<size_t> count(pools_.size());
  for (NodeId v = 0; v < shape.num_nodes(); ++v) {
    const size_t p = 2 * pool_of[v] + (shape.model.graph.is_comm(v) ? 1 : 0);
    pool_of_[v] = p;
    position_[v] = count[p]++;
  }
  for (size_t p = 0; p < pools_.size(); ++p) {
    if (count[p] == 0) continue;
    // The op type decides the statistic; every node of a pool has one type.
    const auto any = static_cast<NodeId>(
        std::find(pool_of_.begin(), pool_of_.end(), p) - pool_of_.begin());
    pools_[p].median = p % 2 == 1 ||
                       trace::IsIdealisedAsComm(shape.model.keys[any].type);
    if (!pools_[p].median) {
      pools_[p].mean.emplace_back(count[p] * shape.num_instances());
    }
  }
}

void IdealPools::Add(const PreparedTrace& window, size_t first_instance,
                     std::span<const double> cost_nd) {
  const size_t inst = window.num_instances();
  const size_t all = shape_.num_instances();
  for (NodeId v = 0; v < window.num_nodes(); ++v) {
    Pool& pool = pools_[pool_of_[v]];
    const std::span<const double> row = cost_nd.subspan(v * inst, inst);
    if (pool.median) {
      for (double x : row) pool.values.Add(x);
    } else {
      pool.mean.front().Add(position_[v] * all + first_instance, row);
    }
  }
}

std::vector<double> IdealPools::NodeCosts(size_t threads) {
  std::vector<double> pooled(pools_.size());
  ParallelFor(pools_.size(), threads, [&](size_t p, size_t /*worker*/) {
    Pool& pool = pools_[p];
    if (!pool.median) {
      const size_t n = pool.mean.empty() ? 0 : pool.mean.front().size();
      pooled[p] = n == 0 ? 0.0
                         : pool.mean.front().Sum() / static_cast<double>(n);
    } else {
      const double median = pool.values.Take();
      // Transfer times (comm nodes) are binary32 values.
      pooled[p] = p % 2 == 1 ? static_cast<double>(Fl32(median)) : median;
    }
  });
  std::vector<double> ideal(shape_.num_nodes());
  for (NodeId v = 0; v < shape_.num_nodes(); ++v) {
    ideal[v] = pooled[pool_of_[v]];
  }
  return ideal;
}

std::string IdealPools::Export() const {
  BytePacker out;
  out.Put<uint64_t>(pools_.size());
  for (const Pool& pool : pools_) {
    if (pool.median) {
      pool.values.Export(&out);
    } else if (!pool.mean.empty()) {
      pool.mean.front().Export(&out);
    }
  }
  return out.Take();
}

Status IdealPools::Merge(std::string_view bytes) {
  ByteUnpacker in(bytes);
  if (in.Get<uint64_t>() != pools_.size()) {
    return Internal("IdealPools::Merge: another job's pools");
  }
  for (Pool& pool : pools_) {
    if (pool.median) {
      RETURN_IF_ERROR(pool.values.Merge(&in));
    } else if (!pool.mean.empty()) {
      RETURN_IF_ERROR(pool.mean.front().Merge(&in));
    }
  }
  return in.done() ? Status::Ok()
                   : Internal("IdealPools::Merge: damaged bytes");
}

}  // namespace strag::whatif
