// SPDX-License-Identifier: Apache-2.0
// DefaultInitAllocator<T>: std::allocator, but an element made without a
// value is default-initialised instead of value-initialised.
//
// For a std::vector of numbers that is sized and then written in full:
// `resize(n)` no longer zero-fills the new elements (their values are
// unspecified until written), so the first touch of a fresh 100 MB array
// happens where it is filled, on the threads that fill it. Elements made
// from a value (push_back, insert, assign, resize(n, value)) are as usual.

#ifndef STRAG_SRC_BASE_DEFAULT_INIT_ALLOCATOR_H_
#define STRAG_SRC_BASE_DEFAULT_INIT_ALLOCATOR_H_

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace strag {

template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>& /*other*/) noexcept {}
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace strag

#endif  // STRAG_SRC_BASE_DEFAULT_INIT_ALLOCATOR_H_
