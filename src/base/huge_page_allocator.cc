// SPDX-License-Identifier: Apache-2.0
#include "base/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdlib>

namespace strag {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kThreshold = size_t{4} << 20;

size_t RoundUp(size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

}  // namespace

void* AllocateBig(size_t bytes) {
  if (bytes < kThreshold) return ::operator new(bytes);
  void* p = std::aligned_alloc(kHugePage, RoundUp(bytes));
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // Advisory: where huge pages are unavailable this fails and changes nothing.
  (void)madvise(p, RoundUp(bytes), MADV_HUGEPAGE);
#endif
  return p;
}

void FreeBig(void* p, size_t bytes) {
  if (bytes < kThreshold) {
    ::operator delete(p);
    return;
  }
  std::free(p);
}

}  // namespace strag
