// SPDX-License-Identifier: Apache-2.0
// HugePageAllocator<T>: an allocator for big arrays that asks the kernel for
// transparent huge pages (2 MiB) on allocations of 4 MiB or more.
//
// Million-op traces lay their per-(op, instance) arrays out with a stride of
// thousands of elements; with 4 KiB pages every access of a transposing pass
// misses the TLB and every first touch faults. Huge pages make both ~500x
// rarer. Small allocations use the ordinary heap.

#ifndef STRAG_SRC_BASE_HUGE_PAGE_ALLOCATOR_H_
#define STRAG_SRC_BASE_HUGE_PAGE_ALLOCATOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace strag {

// Raw allocation behind the allocator; `bytes` must be passed back to free.
void* AllocateBig(size_t bytes);
void FreeBig(void* p, size_t bytes);

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) { return static_cast<T*>(AllocateBig(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { FreeBig(p, n * sizeof(T)); }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

// A std::vector for arrays that can reach millions of elements.
template <typename T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace strag

#endif  // STRAG_SRC_BASE_HUGE_PAGE_ALLOCATOR_H_
