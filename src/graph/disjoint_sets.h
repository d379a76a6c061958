// SPDX-License-Identifier: Apache-2.0
// Union-find over dense ids (path halving), for connectivity checks.

#ifndef STRAG_SRC_GRAPH_DISJOINT_SETS_H_
#define STRAG_SRC_GRAPH_DISJOINT_SETS_H_

#include <cstdint>
#include <numeric>
#include <vector>

namespace strag::graph {

struct DisjointSets {
  std::vector<uint32_t> parent;
  explicit DisjointSets(size_t n) : parent(n) {
    std::iota(parent.begin(), parent.end(), 0u);
  }
  uint32_t Find(uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(uint32_t a, uint32_t b) { parent[Find(a)] = Find(b); }
};

}  // namespace strag::graph

#endif  // STRAG_SRC_GRAPH_DISJOINT_SETS_H_
